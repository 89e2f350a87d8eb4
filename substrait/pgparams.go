package substrait

import "strings"

// pgParameters holds the configuration parameters PostgreSQL 15 knows (its pg_settings, and
// the ones SHOW ALL hides: is_superuser, role, session_authorization, seed and
// ssl_renegotiation_limit), each with its context, which says when it may be set (pg_settings'
// context column): a SET or SHOW of another name is PostgreSQL's 42704 "unrecognized
// configuration parameter", a SET of one that a session cannot change its 55P02
// (setContextError). Names with a dot are custom placeholders, which PostgreSQL creates on SET.
var pgParameters = parameterContexts(map[string]string{
	"backend": "ignore_system_indexes post_auth_delay",
	"internal": "" +
		"block_size data_checksums data_directory_mode debug_assertions in_hot_standby " +
		"integer_datetimes is_superuser lc_collate lc_ctype max_function_args " +
		"max_identifier_length max_index_keys segment_size server_encoding server_version " +
		"server_version_num shared_memory_size shared_memory_size_in_huge_pages ssl_library " +
		"wal_block_size wal_segment_size",
	"postmaster": "" +
		"archive_mode autovacuum_freeze_max_age autovacuum_max_workers " +
		"autovacuum_multixact_freeze_max_age bonjour bonjour_name cluster_name config_file " +
		"data_directory data_sync_retry dynamic_shared_memory_type event_source external_pid_file " +
		"hba_file hot_standby huge_page_size huge_pages ident_file ignore_invalid_pages " +
		"jit_provider listen_addresses logging_collector max_connections max_files_per_process " +
		"max_locks_per_transaction max_logical_replication_workers max_pred_locks_per_transaction " +
		"max_prepared_transactions max_replication_slots max_wal_senders max_worker_processes " +
		"min_dynamic_shared_memory old_snapshot_threshold port recovery_target " +
		"recovery_target_action recovery_target_inclusive recovery_target_lsn " +
		"recovery_target_name recovery_target_time recovery_target_timeline recovery_target_xid " +
		"shared_buffers shared_memory_type shared_preload_libraries " +
		"superuser_reserved_connections track_activity_query_size track_commit_timestamp " +
		"unix_socket_directories unix_socket_group unix_socket_permissions wal_buffers " +
		"wal_decode_buffer_size wal_level wal_log_hints",
	"sighup": "" +
		"archive_cleanup_command archive_command archive_library archive_timeout " +
		"authentication_timeout autovacuum autovacuum_analyze_scale_factor " +
		"autovacuum_analyze_threshold autovacuum_naptime autovacuum_vacuum_cost_delay " +
		"autovacuum_vacuum_cost_limit autovacuum_vacuum_insert_scale_factor " +
		"autovacuum_vacuum_insert_threshold autovacuum_vacuum_scale_factor " +
		"autovacuum_vacuum_threshold autovacuum_work_mem bgwriter_delay bgwriter_flush_after " +
		"bgwriter_lru_maxpages bgwriter_lru_multiplier checkpoint_completion_target " +
		"checkpoint_flush_after checkpoint_timeout checkpoint_warning db_user_namespace fsync " +
		"full_page_writes hot_standby_feedback krb_caseins_users krb_server_keyfile " +
		"log_autovacuum_min_duration log_checkpoints log_destination log_directory log_file_mode " +
		"log_filename log_hostname log_line_prefix log_recovery_conflict_waits log_rotation_age " +
		"log_rotation_size log_startup_progress_interval log_timezone log_truncate_on_rotation " +
		"max_pred_locks_per_page max_pred_locks_per_relation max_slot_wal_keep_size " +
		"max_standby_archive_delay max_standby_streaming_delay max_sync_workers_per_subscription " +
		"max_wal_size min_wal_size pre_auth_delay primary_conninfo primary_slot_name " +
		"promote_trigger_file recovery_end_command recovery_init_sync_method " +
		"recovery_min_apply_delay recovery_prefetch remove_temp_files_after_crash " +
		"restart_after_crash restore_command ssl ssl_ca_file ssl_cert_file ssl_ciphers " +
		"ssl_crl_dir ssl_crl_file ssl_dh_params_file ssl_ecdh_curve ssl_key_file " +
		"ssl_max_protocol_version ssl_min_protocol_version ssl_passphrase_command " +
		"ssl_passphrase_command_supports_reload ssl_prefer_server_ciphers " +
		"synchronous_standby_names syslog_facility syslog_ident syslog_sequence_numbers " +
		"syslog_split_messages trace_recovery_messages vacuum_defer_cleanup_age wal_keep_size " +
		"wal_receiver_create_temp_slot wal_receiver_status_interval wal_receiver_timeout " +
		"wal_retrieve_retry_interval wal_sync_method wal_writer_delay wal_writer_flush_after",
	"superuser": "" +
		"allow_in_place_tablespaces allow_system_table_mods backtrace_functions commit_delay " +
		"compute_query_id deadlock_timeout debug_discard_caches dynamic_library_path " +
		"extension_destdir ignore_checksum_failure jit_dump_bitcode lc_messages " +
		"lo_compat_privileges log_duration log_error_verbosity log_executor_stats log_lock_waits " +
		"log_min_duration_sample log_min_duration_statement log_min_error_statement " +
		"log_min_messages log_parameter_max_length log_parser_stats log_planner_stats " +
		"log_replication_commands log_statement log_statement_sample_rate log_statement_stats " +
		"log_temp_files log_transaction_sample_rate max_stack_depth session_preload_libraries " +
		"session_replication_role temp_file_limit track_activities track_counts track_functions " +
		"track_io_timing track_wal_io_timing update_process_title wal_compression " +
		"wal_consistency_checking wal_init_zero wal_recycle zero_damaged_pages",
	"superuser-backend": "jit_debugging_support jit_profiling_support log_connections log_disconnections",
	"user": "" +
		"DateStyle IntervalStyle TimeZone application_name array_nulls backend_flush_after " +
		"backslash_quote bytea_output check_function_bodies client_connection_check_interval " +
		"client_encoding client_min_messages commit_siblings constraint_exclusion " +
		"cpu_index_tuple_cost cpu_operator_cost cpu_tuple_cost cursor_tuple_fraction " +
		"debug_pretty_print debug_print_parse debug_print_plan debug_print_rewritten " +
		"default_statistics_target default_table_access_method default_tablespace " +
		"default_text_search_config default_toast_compression default_transaction_deferrable " +
		"default_transaction_isolation default_transaction_read_only effective_cache_size " +
		"effective_io_concurrency enable_async_append enable_bitmapscan enable_gathermerge " +
		"enable_hashagg enable_hashjoin enable_incremental_sort enable_indexonlyscan " +
		"enable_indexscan enable_material enable_memoize enable_mergejoin enable_nestloop " +
		"enable_parallel_append enable_parallel_hash enable_partition_pruning " +
		"enable_partitionwise_aggregate enable_partitionwise_join enable_seqscan enable_sort " +
		"enable_tidscan escape_string_warning exit_on_error extra_float_digits " +
		"force_parallel_mode from_collapse_limit geqo geqo_effort geqo_generations geqo_pool_size " +
		"geqo_seed geqo_selection_bias geqo_threshold gin_fuzzy_search_limit " +
		"gin_pending_list_limit hash_mem_multiplier idle_in_transaction_session_timeout " +
		"idle_session_timeout jit jit_above_cost jit_expressions jit_inline_above_cost " +
		"jit_optimize_above_cost jit_tuple_deforming join_collapse_limit lc_monetary lc_numeric " +
		"lc_time local_preload_libraries lock_timeout log_parameter_max_length_on_error " +
		"logical_decoding_work_mem maintenance_io_concurrency maintenance_work_mem " +
		"max_parallel_maintenance_workers max_parallel_workers max_parallel_workers_per_gather " +
		"min_parallel_index_scan_size min_parallel_table_scan_size parallel_leader_participation " +
		"parallel_setup_cost parallel_tuple_cost password_encryption plan_cache_mode " +
		"quote_all_identifiers random_page_cost recursive_worktable_factor " +
		"restrict_nonsystem_relation_kind role row_security search_path seed seq_page_cost " +
		"session_authorization ssl_renegotiation_limit standard_conforming_strings " +
		"statement_timeout stats_fetch_consistency synchronize_seqscans synchronous_commit " +
		"tcp_keepalives_count tcp_keepalives_idle tcp_keepalives_interval tcp_user_timeout " +
		"temp_buffers temp_tablespaces timezone_abbreviations trace_notify trace_sort " +
		"transaction_deferrable transaction_isolation transaction_read_only transform_null_equals " +
		"vacuum_cost_delay vacuum_cost_limit vacuum_cost_page_dirty vacuum_cost_page_hit " +
		"vacuum_cost_page_miss vacuum_failsafe_age vacuum_freeze_min_age vacuum_freeze_table_age " +
		"vacuum_multixact_failsafe_age vacuum_multixact_freeze_min_age " +
		"vacuum_multixact_freeze_table_age wal_sender_timeout wal_skip_threshold work_mem " +
		"xmlbinary xmloption",
})

// parameterContexts turns pgParameters' lists (context → names separated by spaces) into a
// map from name to context.
func parameterContexts(lists map[string]string) map[string]string {
	m := map[string]string{}
	for ctx, names := range lists {
		for _, n := range strings.Fields(names) {
			m[n] = ctx
		}
	}
	return m
}

// errUnknownParameter is PostgreSQL's refusal of a name that is no configuration parameter
// (42704); the name, the client's text, is not echoed.
var errUnknownParameter = refused(InvalidArgument, "42704", "unrecognized configuration parameter")

// knownParameter reports whether name (lower case) is a parameter PostgreSQL 15 knows.
func knownParameter(name string) bool {
	_, ok := pgParameters[name]
	return ok
}

// setContextError is PostgreSQL's refusal (55P02, in its words) of a SET or RESET of
// parameter name, which a session cannot change after it started (set_config_option by the
// parameter's context), or nil when a session may set it (user, superuser).
func setContextError(name string) *Error {
	var why string
	switch pgParameters[name] {
	case "internal":
		why = "cannot be changed"
	case "postmaster":
		why = "cannot be changed without restarting the server"
	case "sighup":
		why = "cannot be changed now"
	case "backend", "superuser-backend":
		why = "cannot be set after connection start"
	default:
		return nil
	}
	return refused(InvalidArgument, "55P02", "parameter %q %s", name, why)
}
