"""SQLSTATEs through ADBC's Flight SQL driver: the driver leaves `exc.sqlstate` None (it never
fills it from a Flight SQL server); flightsrv_errors.sqlstate reads the one flightsrv sends in
the status's google.rpc.ErrorInfo. The states are PostgreSQL's for the same statements."""

from __future__ import annotations

import adbc_driver_flightsql.dbapi
import adbc_driver_manager
import pytest

from flightsrv_errors import sqlstate


@pytest.mark.parametrize("sql, state", [
    ("SELECT '2001-13-45'::timestamp", "22008"),
    ("SELECT 'garbage'::date", "22007"),
    ("SELECT '2001-01-01 10:00+16'::timestamptz", "22009"),
    ("SELECT 'yesterday'::timestamptz", "0A000"),
    ("SELECT 1 / 0", "22012"),
])
def test_sqlstate_of_a_refusal(uri, sql, state):
    with adbc_driver_flightsql.dbapi.connect(uri, autocommit=True) as conn, conn.cursor() as cur:
        with pytest.raises(adbc_driver_manager.Error) as err:
            cur.execute(sql)
            cur.fetchall()
    assert err.value.sqlstate is None  # ADBC's driver 1.13 never sets it (clients/python/README.md)
    assert sqlstate(err.value) == state
