"""The SQLSTATE of a flightsrv refusal, read from an ADBC error.

flightsrv sends PostgreSQL's SQLSTATE of a refused query (22008, 42883, 0A000…) in the gRPC
status, as a google.rpc.ErrorInfo detail of domain "flightsrv" whose metadata key "sqlstate"
holds it. ADBC's Flight SQL driver (1.13, Go) never fills the ADBC error's SQLSTATE from a
Flight SQL server — its conversion of a gRPC status copies the message, the ADBC status code,
the gRPC code as the vendor code and the status details, nothing else — so Python's
`exc.sqlstate` is None. The details are there: `exc.details` holds
(b"grpc-status-details-bin", <google.protobuf.Any bytes>) for each detail. `sqlstate(exc)` reads
them with the standard library only (the protobuf wire format of Any and ErrorInfo).
"""

from __future__ import annotations

ERROR_INFO_TYPE = "type.googleapis.com/google.rpc.ErrorInfo"


def _fields(buf: bytes):
    """(field number, value) of each length-delimited field of a protobuf message; other
    wire types are skipped."""
    i = 0
    while i < len(buf):
        key, i = _varint(buf, i)
        num, wire = key >> 3, key & 7
        if wire == 2:
            n, i = _varint(buf, i)
            yield num, buf[i:i + n]
            i += n
        elif wire == 0:
            _, i = _varint(buf, i)
        elif wire == 1:
            i += 8
        elif wire == 5:
            i += 4
        else:
            raise ValueError("unsupported protobuf wire type")


def _varint(buf: bytes, i: int) -> tuple[int, int]:
    v = shift = 0
    while True:
        b = buf[i]
        i += 1
        v |= (b & 0x7F) << shift
        if b < 0x80:
            return v, i
        shift += 7


def sqlstate(exc) -> str | None:
    """The SQLSTATE flightsrv sent with the refusal exc (an adbc_driver_manager.Error), or
    `exc.sqlstate` when the driver filled it, or None."""
    if getattr(exc, "sqlstate", None):
        return exc.sqlstate
    for key, value in getattr(exc, "details", None) or []:
        if key not in (b"grpc-status-details-bin", "grpc-status-details-bin"):
            continue
        any_msg = dict(_fields(value))
        if any_msg.get(1, b"").decode() != ERROR_INFO_TYPE:
            continue
        domain, metadata = "", {}
        for num, field in _fields(any_msg.get(2, b"")):
            if num == 2:
                domain = field.decode()
            elif num == 3:
                entry = dict(_fields(field))
                metadata[entry.get(1, b"").decode()] = entry.get(2, b"").decode()
        if domain == "flightsrv" and "sqlstate" in metadata:
            return metadata["sqlstate"]
    return None
