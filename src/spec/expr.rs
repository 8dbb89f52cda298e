//! Arithmetic expressions over named variables, parsed once and evaluated per sweep point.
