//! The accountant's memo: an accounting or a calibration is a pure function of its
//! arguments, and a run asks for the same ones many times (TP-TopK's tuner trains every
//! (learning rate, clip) cell of a point with the same privacy plan, and every replicate
//! of the point has that plan too; each training run accounts its ledger afterwards).
//! [`super::epsilon`], [`super::calibrate()`], [`super::calibrate_two_phase`] and the
//! independent [`super::rdp_quadrature::epsilon_subsampled_gaussian`] (once a unit) keep
//! their results in a process-wide memo keyed by their arguments bit for bit and return
//! the stored value, the same bits, when asked again, so no output changes (issue 34:
//! the quick suite's reports are byte-identical with and without it).
use super::{Accountant, AccountantRecipe, PrivacyError};
use std::collections::HashMap;
use std::sync::{Mutex, OnceLock};

/// The arguments of an accounting, bit for bit: the accountant, the `f64` arguments as
/// their bits, the integer ones, and the addresses of the recipe's formulas (a recipe that
/// replaces a formula has another address, so another key).
#[derive(Clone, PartialEq, Eq, Hash)]
pub(super) struct Key {
    acc: Option<Accountant>,
    args: Vec<u64>,
    recipe: Option<[usize; 3]>,
}

impl Key {
    pub(super) fn new(
        acc: Accountant,
        floats: &[f64],
        ints: &[u64],
        recipe: &AccountantRecipe,
    ) -> Self {
        Key {
            recipe: Some([
                recipe.step_rdp as usize,
                recipe.compose as usize,
                recipe.conversion as usize,
            ]),
            acc: Some(acc),
            ..Key::plain(floats, ints)
        }
    }

    /// The key of a computation with no accountant and no recipe (the independent
    /// quadrature accountant).
    pub(super) fn plain(floats: &[f64], ints: &[u64]) -> Self {
        Key {
            acc: None,
            args: floats
                .iter()
                .map(|x| x.to_bits())
                .chain(ints.iter().copied())
                .collect(),
            recipe: None,
        }
    }
}

/// Most results a memo keeps; when full it is emptied (a run's plans repeat, so this
/// bounds memory without costing many hits).
const CAPACITY: usize = 1 << 14;

/// One memo: a static in the function it serves.
pub(super) struct Memo<V>(OnceLock<Mutex<HashMap<Key, V>>>);

impl<V> Memo<V> {
    pub(super) const fn new() -> Self {
        Memo(OnceLock::new())
    }
}

/// `f()`, or the value stored for `key`. Only successes are stored (an error is computed
/// again, with its message). `f` runs outside the lock: two threads asking for the same
/// key at once both compute it and store the same bits.
pub(super) fn memoized<V: Copy>(
    memo: &'static Memo<V>,
    key: Key,
    f: impl FnOnce() -> Result<V, PrivacyError>,
) -> Result<V, PrivacyError> {
    let map = memo.0.get_or_init(Mutex::default);
    let lock = || {
        map.lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    };
    if let Some(v) = lock().get(&key) {
        return Ok(*v);
    }
    let v = f()?;
    let mut m = lock();
    if m.len() >= CAPACITY {
        m.clear();
    }
    m.insert(key, v);
    Ok(v)
}

#[cfg(test)]
mod tests {
    use super::super::*;

    /// The memo returns the bits the accountant computes, for the published formulas and
    /// for a replaced one (another recipe's formula is another key, not the published result).
    #[test]
    fn a_memoized_result_is_the_computed_one_and_a_replaced_formula_is_another_key() {
        let phases = [Phase::new(0.01, 1.1, 1000), Phase::new(0.01, 0.9, 500)];
        let paper = AccountantRecipe::PAPER;
        let direct = epsilon_once(Accountant::Rdp, &phases, 1e-5, &paper).unwrap();
        for _ in 0..2 {
            let m = epsilon(Accountant::Rdp, &phases, 1e-5, &paper).unwrap();
            assert_eq!(m.epsilon.to_bits(), direct.epsilon.to_bits());
        }
        fn doubled(phases: &[f64]) -> f64 {
            2.0 * phases.iter().sum::<f64>()
        }
        let replaced = AccountantRecipe {
            compose: doubled,
            ..paper
        };
        let f = epsilon(Accountant::Rdp, &phases, 1e-5, &replaced).unwrap();
        assert_eq!(
            f.epsilon.to_bits(),
            epsilon_once(Accountant::Rdp, &phases, 1e-5, &replaced)
                .unwrap()
                .epsilon
                .to_bits()
        );
        assert!(f.epsilon > direct.epsilon);
        let c = calibrate(Accountant::Rdp, 3.0, 1e-5, 0.01, 1000, &paper).unwrap();
        let again = calibrate(Accountant::Rdp, 3.0, 1e-5, 0.01, 1000, &paper).unwrap();
        assert_eq!(c, again);
        let f = calibrate(Accountant::Rdp, 3.0, 1e-5, 0.01, 1000, &replaced).unwrap();
        assert!(f.noise_multiplier > c.noise_multiplier);
    }
}
