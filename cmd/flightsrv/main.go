// Command flightsrv is the Arrow Flight SQL server for routed (time-bucketed) tables, and its
// operator tools:
//
//	flightsrv serve    serve Flight SQL over a hot store and an archive
//	flightsrv demo     load the committed flights sample into an embedded store and serve it
//	flightsrv load     append records from Parquet or CSV files (a glob) through the write fence, resumably
//	flightsrv archive  archive every bucket that ends before a cutoff
//	flightsrv migrate  apply the hot store's schema migrations
//
// Every flag has an environment variable (FLIGHTSRV_<FLAG>, upper case, dashes as
// underscores); flags win. Run `flightsrv <command> -h` for a command's flags.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"log/slog"
	"os"
	"os/signal"
	"strings"
	"syscall"
)

var version = "dev"

func main() {
	logger, err := newLogger(os.Stderr, os.Getenv("FLIGHTSRV_LOG_FORMAT"), os.Getenv("FLIGHTSRV_LOG_LEVEL"))
	if err != nil {
		fmt.Fprintln(os.Stderr, "flightsrv:", err)
		os.Exit(2)
	}
	slog.SetDefault(logger)
	if len(os.Args) < 2 {
		usage()
		os.Exit(2)
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	switch cmd, args := os.Args[1], os.Args[2:]; cmd {
	case "serve":
		err = cmdServe(ctx, args)
	case "demo":
		err = cmdDemo(ctx, args)
	case "load":
		err = cmdLoad(ctx, args)
	case "archive":
		err = cmdArchive(ctx, args)
	case "migrate":
		err = cmdMigrate(ctx, args)
	case "auth":
		err = cmdAuth(args)
	case "version", "--version":
		fmt.Println("flightsrv", version)
	case "help", "-h", "--help":
		usage()
	default:
		fmt.Fprintf(os.Stderr, "flightsrv: unknown command %q\n\n", cmd)
		usage()
		os.Exit(2)
	}
	if err != nil && !errors.Is(err, flag.ErrHelp) {
		fmt.Fprintln(os.Stderr, "flightsrv:", err)
		os.Exit(1)
	}
}

func usage() {
	fmt.Fprint(os.Stderr, `usage: flightsrv <command> [flags]

commands:
  serve     serve Flight SQL over a hot store and an archive
  demo      load the committed flights sample into .demo/ and serve it
  load      append records from Parquet or CSV files (a glob) through the write fence, resumably
  archive   archive every bucket that ends before a cutoff
  migrate   apply the hot store's schema migrations
  auth      hash-password: a users-file line; new-key: create or rotate a token keyring
  version   print the version
`)
}

// newFlags returns a flag set whose flags default to FLIGHTSRV_* environment variables.
func newFlags(name string) *flag.FlagSet {
	fs := flag.NewFlagSet("flightsrv "+name, flag.ContinueOnError)
	return fs
}

// parse parses args after applying FLIGHTSRV_<NAME> environment defaults to every flag.
func parse(fs *flag.FlagSet, args []string) error {
	var envErr error
	fs.VisitAll(func(f *flag.Flag) {
		env := "FLIGHTSRV_" + strings.ToUpper(strings.ReplaceAll(f.Name, "-", "_"))
		if v, ok := os.LookupEnv(env); ok && envErr == nil {
			if err := fs.Set(f.Name, v); err != nil {
				envErr = fmt.Errorf("%s: %w", env, err)
			}
		}
	})
	if envErr != nil {
		return envErr
	}
	if err := fs.Parse(args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return fmt.Errorf("unexpected arguments: %s", strings.Join(fs.Args(), " "))
	}
	return nil
}
