//! The expensive functions of an expression (the accountants and calibrations of
//! [`super::functions`]) computed once: a calibration under the PLD accountant at 1.6e5
//! steps takes tens of seconds, and an `rhs` is evaluated at every point, every replicate
//! (a metric `rhs`) and every run.
//!
//! Two layers, both keyed by the function's name and the bit patterns of its arguments:
//! * in this process, a table ([`MEMO`]): a value is computed once per process;
//! * across runs, a [`FunctionStore`] the caller provides for the scope of a run
//!   ([`with_store`]; the command line passes its result cache, whose key adds the
//!   build's engine hash and the machine's kernels, so a value is served only to a build
//!   and machine that would compute the same bits).
//!
//! The functions are pure (the tool's own accountants with the paper recipe: no run's
//! fault reaches them), so a stored value is the value: memoising changes no output
//! byte. A non-finite value (outside a function's domain) is not stored.
use std::cell::RefCell;
use std::collections::HashMap;
use std::sync::{Arc, Mutex, OnceLock};

/// Where function values are kept between runs (the result cache implements it).
pub trait FunctionStore {
    /// The stored value of `name(args)`, if any.
    fn read(&self, name: &str, args: &[f64]) -> Option<f64>;
    /// Stores `value` of `name(args)`, which took `seconds` to compute.
    fn write(&self, name: &str, args: &[f64], value: f64, seconds: f64);
}

thread_local! {
    static STORE: RefCell<Option<Arc<dyn FunctionStore>>> = const { RefCell::new(None) };
}

type Memo = Mutex<HashMap<(&'static str, Vec<u64>), u64>>;

/// The values computed in this process.
static MEMO: OnceLock<Memo> = OnceLock::new();

/// Runs `f` with `store` serving and keeping the function values computed on this
/// thread (a scope, restored when `f` returns or unwinds).
pub fn with_store<R>(store: Arc<dyn FunctionStore>, f: impl FnOnce() -> R) -> R {
    struct Restore(Option<Arc<dyn FunctionStore>>);
    impl Drop for Restore {
        fn drop(&mut self) {
            let previous = self.0.take();
            STORE.with(|s| *s.borrow_mut() = previous);
        }
    }
    let _restore = Restore(STORE.with(|s| s.borrow_mut().replace(store)));
    f()
}

/// `name(args)`, from this process's table, else from the scope's store, else computed
/// by `f` (and kept in both).
pub(super) fn memoised(name: &'static str, args: &[f64], f: impl FnOnce() -> f64) -> f64 {
    let key = (name, args.iter().map(|a| a.to_bits()).collect::<Vec<u64>>());
    let memo = MEMO.get_or_init(Default::default);
    if let Some(bits) = memo.lock().ok().and_then(|m| m.get(&key).copied()) {
        return f64::from_bits(bits);
    }
    let store = STORE.with(|s| s.borrow().clone());
    let stored = store.as_ref().and_then(|s| s.read(name, args));
    let value = match stored {
        Some(v) => v,
        None => {
            let start = std::time::Instant::now();
            let v = f();
            if let (Some(s), true) = (&store, v.is_finite()) {
                s.write(name, args, v, start.elapsed().as_secs_f64());
            }
            v
        }
    };
    if value.is_finite() {
        if let Ok(mut m) = memo.lock() {
            m.insert(key, value.to_bits());
        }
    }
    value
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::{AtomicUsize, Ordering};

    #[derive(Default)]
    struct Counting {
        values: Mutex<HashMap<(String, Vec<u64>), f64>>,
        reads: AtomicUsize,
        writes: AtomicUsize,
    }

    impl FunctionStore for Counting {
        fn read(&self, name: &str, args: &[f64]) -> Option<f64> {
            self.reads.fetch_add(1, Ordering::Relaxed);
            let k = (name.to_string(), args.iter().map(|a| a.to_bits()).collect());
            self.values.lock().unwrap().get(&k).copied()
        }
        fn write(&self, name: &str, args: &[f64], value: f64, _seconds: f64) {
            self.writes.fetch_add(1, Ordering::Relaxed);
            let k = (name.to_string(), args.iter().map(|a| a.to_bits()).collect());
            self.values.lock().unwrap().insert(k, value);
        }
    }

    #[test]
    fn a_value_is_computed_once_and_a_non_finite_one_is_not_kept() {
        let store = Arc::new(Counting::default());
        let calls = AtomicUsize::new(0);
        // A name no other test uses: the process table is shared.
        let f = |x: f64| {
            memoised("memo_test_fn", &[x, 2.0], || {
                calls.fetch_add(1, Ordering::Relaxed);
                if x < 0.0 {
                    f64::NAN
                } else {
                    x * 2.0
                }
            })
        };
        with_store(store.clone(), || {
            assert_eq!(f(1.5).to_bits(), 3.0f64.to_bits());
            assert_eq!(f(1.5).to_bits(), 3.0f64.to_bits());
            assert!(f(-1.0).is_nan());
            assert!(f(-1.0).is_nan());
        });
        assert_eq!(calls.load(Ordering::Relaxed), 3, "1.5 once, -1 twice");
        assert_eq!(
            store.writes.load(Ordering::Relaxed),
            1,
            "only the finite value"
        );
    }
}
