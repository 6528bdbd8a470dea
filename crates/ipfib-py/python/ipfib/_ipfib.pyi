"""Type stubs for the Rust extension module behind ``ipfib``."""

import ipaddress
import os
from typing import TYPE_CHECKING, Iterable, Iterator, Optional, Sequence, Tuple, TypeVar, Union, overload

import numpy as np
import numpy.typing as npt

if TYPE_CHECKING:
    import pyarrow

__version__: str

_Address = Union[str, bytes, int, ipaddress.IPv4Address, ipaddress.IPv6Address]
Key = Union[
    _Address,
    ipaddress.IPv4Network,
    ipaddress.IPv6Network,
    Tuple[_Address, int],
]
"""A key: "10.0.0.0/8" or "10.1.2.3", an ipaddress address or network, packed bytes (4 or 16),
an (address, prefixlen) tuple, or an int when the table's int_family is set."""

Addresses = Union[
    npt.NDArray[np.uint32],
    npt.NDArray[np.uint8],
    npt.NDArray[np.uint64],
    Sequence[str],
    Iterable[str],
]
"""Batch input: uint32 (IPv4, host order), (n, 16) uint8 (IPv6, network order), (n, 2) uint64
(IPv6, high word first), or strings of both families.

Arrays may have any layout: C-contiguous, aligned, native-endian arrays are read directly;
Fortran order, strided/reversed/broadcast views, unaligned views and big-endian dtypes are
copied by NumPy first. Other dtypes (int64, ...), 0-d arrays and other shapes are a TypeError
saying what to pass (e.g. ``a.astype(np.uint32)``)."""

_D = TypeVar("_D")

def engines(family: Optional[int] = None) -> list[str]:
    """The registered engine names, the default ("planb") first; with ``family`` (4 or 6) only
    the engines that hold routes of that family (DXR and its presets are IPv4 only).
    ValueError for another family."""

class Table:
    """A longest-prefix-match table of IPv4 and IPv6 routes, prefix -> int (0-4294967295)."""

    def __init__(self, engine: str = "planb", int_family: Optional[int] = None) -> None: ...
    @classmethod
    def load(
        cls,
        path: Union[str, "os.PathLike[str]"],
        engine: str = "planb",
        *,
        int_family: Optional[int] = None,
        peer: Union[str, int, None] = None,
        value: Optional[str] = None,
        skip_bad_records: bool = False,
        allow_empty: bool = False,
        mmap: bool = False,
    ) -> "Table":
        """Reads a text table, an MRT RIB dump (plain, gzip, bzip2) or a saved table, once
        (pipes and FIFOs work). A saved table is read into memory; ``mmap=True`` maps it
        instead, and then the file must not be truncated or written into while the table
        lives."""
    @classmethod
    def from_pairs(
        cls,
        pairs: Iterable[Tuple[Key, int]],
        engine: str = "planb",
        int_family: Optional[int] = None,
    ) -> "Table": ...
    engine: str
    """The engine's name; assign a name from ``engines()`` to switch."""
    int_family: Optional[int]
    """4 or 6: what an int key is; None refuses int keys."""
    def __setitem__(self, key: Key, value: int) -> None: ...
    def __getitem__(self, key: Key) -> int: ...
    @overload
    def get(self, key: Key) -> Optional[int]: ...
    @overload
    def get(self, key: Key, default: _D) -> Union[int, _D]: ...
    def __contains__(self, key: object) -> bool: ...
    def get_key(self, key: Key) -> Optional[str]: ...
    def __delitem__(self, key: Key) -> None: ...
    def delete(self, key: Key) -> None: ...
    def insert(self, key: Key, value: int) -> None: ...
    def has_key(self, key: Key) -> bool: ...
    def parent(self, key: Key) -> Optional[str]: ...
    def children(self, key: Key) -> list[str]: ...
    def __len__(self) -> int: ...
    def __iter__(self) -> Iterator[str]: ...
    def keys(self) -> list[str]: ...
    def values(self) -> list[int]: ...
    def items(self) -> list[Tuple[str, int]]: ...
    def lookup(
        self,
        addrs: Addresses,
        miss: int = 0xFFFFFFFF,
        *,
        out: Optional[npt.NDArray[np.uint32]] = None,
        threads: int = 1,
    ) -> npt.NDArray[np.uint32]:
        """Next hop per address, ``miss`` where no route matches (GIL released).

        ``addrs`` in any array layout (see ``Addresses``): a C-contiguous, aligned,
        native-endian numeric array is read in place; any other is copied first. ``out``: a
        C-contiguous uint32 array of len(addrs) written and returned instead of a new one.
        ``threads``: split a big batch over this many threads (0: one per core; at least
        262,144 addresses each)."""
    def lookup_arrow(
        self, addrs: object, miss: int = 0xFFFFFFFF, *, threads: int = 1
    ) -> "pyarrow.UInt32Array":
        """A pyarrow uint32 array: null where the input (Arrow) is null, ``miss`` where no
        route matches."""
    def lookup_mask(
        self, addrs: Addresses
    ) -> Tuple[npt.NDArray[np.uint32], npt.NDArray[np.bool_]]:
        """(values, found): values are 0 where found is False."""
    def save(self, path: Union[str, "os.PathLike[str]"]) -> None:
        """Writes the saved-table format (planb), which ``Table.load`` opens without a build."""
    def copy(self) -> "Table": ...
    def __copy__(self) -> "Table": ...
    def __deepcopy__(self, memo: object) -> "Table": ...
    def __reduce__(self) -> Tuple[object, Tuple[bytes]]: ...
    @staticmethod
    def _from_pickle(data: bytes) -> "Table": ...

class LiveTable:
    """A table that changes while threads look up in it; every lookup answers from one whole
    version, old or new, never a mix."""

    def __init__(
        self, routes: Optional[Table] = None, engine: str = "planb", delay_us: int = 100
    ) -> None: ...
    def insert(self, key: Key, value: int) -> None: ...
    def __setitem__(self, key: Key, value: int) -> None: ...
    def remove(self, key: Key) -> None: ...
    def apply(self, changes: Iterable[Tuple[Key, Optional[int]]]) -> None:
        """A batch of (prefix, value) pairs, value None for a removal: all or nothing."""
    def flush(self) -> None:
        """Returns once every earlier change is visible."""
    def lookup(
        self,
        addrs: Addresses,
        miss: int = 0xFFFFFFFF,
        *,
        out: Optional[npt.NDArray[np.uint32]] = None,
        threads: int = 1,
    ) -> npt.NDArray[np.uint32]: ...
    def lookup_arrow(
        self, addrs: object, miss: int = 0xFFFFFFFF, *, threads: int = 1
    ) -> "pyarrow.UInt32Array":
        """A pyarrow uint32 array: null where the input (Arrow) is null, ``miss`` where no
        route matches."""
    def lookup_mask(
        self, addrs: Addresses
    ) -> Tuple[npt.NDArray[np.uint32], npt.NDArray[np.bool_]]: ...
    @overload
    def get(self, addr: Key) -> Optional[int]: ...
    @overload
    def get(self, addr: Key, default: _D) -> Union[int, _D]: ...
    def __getitem__(self, addr: Key) -> int: ...
    def __contains__(self, addr: object) -> bool: ...
    @property
    def version(self) -> int: ...
    @property
    def engine(self) -> str: ...
    def table(self) -> Table: ...
    def save(self, path: Union[str, "os.PathLike[str]"]) -> None: ...
