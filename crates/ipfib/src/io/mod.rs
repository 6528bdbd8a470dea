//! Reading and writing tables and address lists.

pub mod text;
