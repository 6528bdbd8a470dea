"""ipfib_polars: longest-prefix match (ipfib) as a Polars expression.

``lookup(expr, table)`` gives, for each address of a column, the value (next hop, origin AS)
of the longest route containing it, as a ``UInt32`` column: null where no route matches and
where the address is null. It is elementwise, so it works in eager, lazy and streaming
queries::

    import ipfib, polars as pl, ipfib_polars

    ipfib.Table.load("rib.txt.gz").save("rib.ipfib")      # once: a saved table
    (pl.scan_parquet("flows.parquet")
       .filter(pl.col("bytes") > 0)
       .with_columns(hop=ipfib_polars.lookup("dst", "rib.ipfib"))
       .group_by("hop").agg(pl.col("bytes").sum())
       .collect())

Columns: ``String`` (IPv4/IPv6 text, read exactly as ``ipfib.Table.lookup`` reads it; text
that is not an address is a ``ComputeError`` naming the row and the text), ``Binary`` (4
bytes IPv4, 16 bytes IPv6, network order; another length is a ``ComputeError`` naming the
row) and ``UInt32`` (IPv4 as an integer; cast other integer columns).
"""

from __future__ import annotations

import atexit
import hashlib
import os
import shutil
import tempfile
import threading
from pathlib import Path
from typing import TYPE_CHECKING, Union

import polars as pl
from polars.plugins import register_plugin_function

from ._ipfib_polars import __version__

if TYPE_CHECKING:
    import ipfib

__all__ = ["lookup", "__version__"]

_LIB = Path(__file__).parent
_lock = threading.Lock()
_dir: Union[str, None] = None


def lookup(
    expr: Union[pl.Expr, str],
    table: Union[str, "os.PathLike[str]", "ipfib.Table", "ipfib.LiveTable"],
) -> pl.Expr:
    """The longest-prefix-match value of each address of ``expr`` (an expression or a column
    name) in ``table``: a ``UInt32`` expression, null for a miss or a null address.

    ``table`` is the path of a saved table (``Table.save``; made absolute now), opened and
    validated once per process and file version however many batches the query has. An
    ``ipfib.Table`` or ``ipfib.LiveTable`` is saved now, as it is at this call, to a private
    temporary file (removed at exit) named by the SHA-256 of its content: a table whose
    routes changed gets a new file, so an expression never answers from an older version,
    and an unchanged one reuses the file (and the plugin's opened table). Later changes to
    the table do not reach an expression already made: call ``lookup`` again. Each call
    saves and hashes the whole table (a build first for a ``LiveTable`` or a changed
    ``Table``); the files stay until the process exits, one per distinct content.
    """
    if isinstance(expr, str):
        expr = pl.col(expr)
    if isinstance(table, (str, bytes, os.PathLike)):
        path = os.path.abspath(os.fsdecode(table))
    else:
        path = _saved(table)
    return register_plugin_function(
        plugin_path=_LIB,
        function_name="lookup",
        args=expr,
        kwargs={"table": path},
        is_elementwise=True,
    )


def _saved(table: object) -> str:
    """The path of a saved file holding exactly ``table``'s current routes."""
    import ipfib

    if not isinstance(table, (ipfib.Table, ipfib.LiveTable)):
        raise TypeError(
            "table is a saved table's path, an ipfib.Table or an ipfib.LiveTable, "
            f"not {type(table).__name__}"
        )
    global _dir
    with _lock:
        if _dir is None:
            _dir = tempfile.mkdtemp(prefix="ipfib-polars-")
            atexit.register(shutil.rmtree, _dir, True)
        fd, tmp = tempfile.mkstemp(dir=_dir, suffix=".tmp")
        os.close(fd)
        try:
            if table.engine == "planb":
                table.save(tmp)
            else:  # only PlanB has a saved format
                routes = table.table() if isinstance(table, ipfib.LiveTable) else table.copy()
                routes.engine = "planb"
                routes.save(tmp)
            digest = hashlib.sha256()
            with open(tmp, "rb") as f:
                while chunk := f.read(1 << 20):
                    digest.update(chunk)
            path = os.path.join(_dir, digest.hexdigest() + ".ipfib")
            if os.path.exists(path):
                os.unlink(tmp)
            else:
                os.replace(tmp, path)
        except BaseException:
            if os.path.exists(tmp):
                os.unlink(tmp)
            raise
    return path
