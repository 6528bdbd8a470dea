//! FIB text format (to be written).
