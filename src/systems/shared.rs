//! Work shared by the units of one (sweep, point, replicate): issue 34, item 2.
//!
//! Variants of a claim share their seed paths ([`crate::plan`]: a unit's path names its
//! sweep, point and replicate, not its variant), so a computation that reads only the
//! streams and the variables on which the variants agree gives the same bits in each of
//! them. The executor ([`crate::execute`]) runs the units of such a group one after the
//! other with one [`SharedWork`], and a system computes the expensive part of a unit — the
//! random features of a data set, a kernel problem, a tuned comparator — through
//! [`SharedWork::get_or_try`], keyed by everything that part reads. The first unit of the
//! group computes it; the others read it. Nothing a unit reports depends on whether it
//! computed or read the part: a key that leaves out something the computation reads
//! would be a defect of the system (tests compare every claim's raw values with and
//! without sharing).
use std::any::Any;
use std::sync::{Arc, Mutex};

/// The shared parts of one group of units (module docs); dropped with the group.
#[derive(Default)]
pub struct SharedWork {
    entries: Mutex<Vec<(String, Arc<dyn Any + Send + Sync>)>>,
}

impl SharedWork {
    pub fn new() -> Self {
        Self::default()
    }

    /// The part under `key`, computed by `compute` if no unit of the group has computed
    /// it yet (an error is not kept: the next unit computes again and fails the same way).
    pub fn get_or_try<T, E>(
        &self,
        key: &str,
        compute: impl FnOnce() -> Result<T, E>,
    ) -> Result<Arc<T>, E>
    where
        T: Any + Send + Sync,
    {
        let found = self
            .entries
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .iter()
            .find(|(k, _)| k == key)
            .map(|(_, v)| v.clone());
        if let Some(v) = found.and_then(|v| v.downcast::<T>().ok()) {
            return Ok(v);
        }
        let v = Arc::new(compute()?);
        self.entries
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .push((key.to_string(), v.clone()));
        Ok(v)
    }

    /// Number of parts kept (for tests).
    pub fn len(&self) -> usize {
        self.entries.lock().unwrap_or_else(|e| e.into_inner()).len()
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_part_is_computed_once_per_key_and_errors_are_not_kept() {
        let w = SharedWork::new();
        let mut calls = 0;
        let a: Arc<Vec<f64>> = w
            .get_or_try("a", || {
                calls += 1;
                Ok::<_, ()>(vec![1.0])
            })
            .unwrap();
        let b: Arc<Vec<f64>> = w
            .get_or_try("a", || {
                calls += 1;
                Ok::<_, ()>(vec![2.0])
            })
            .unwrap();
        assert_eq!((calls, a[0], b[0]), (1, 1.0, 1.0));
        assert!(w.get_or_try::<Vec<f64>, _>("b", || Err("no")).is_err());
        assert_eq!(w.len(), 1);
        let c: Arc<Vec<f64>> = w.get_or_try("b", || Ok::<_, ()>(vec![3.0])).unwrap();
        assert_eq!(c[0], 3.0);
        assert_eq!(w.len(), 2);
    }
}
