//! Small dense linear-algebra helpers on top of ndarray / ndarray-linalg.
