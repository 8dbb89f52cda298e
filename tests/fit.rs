//! Integration tests of fits, bounds and verdict rules.
