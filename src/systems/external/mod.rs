//! `system: external`: a claim checked against anyone's training core, a program that
//! speaks the JSON Lines protocol `dpclaims-external/2` ([`protocol`];
//! docs/external-protocol.md) on its stdin/stdout.
//!
//! Unlike the built-in systems an external system has no static declaration: its metrics
//! are the spec's `external.metrics`, its parameters whatever the spec defines (every
//! variable of a sweep point is sent), its options free-form strings. One
//! [`ExternalSystem`] is therefore built per claim when the spec is loaded (and kept for
//! the life of the process), and it is not in [`super::all`]: the regression matrix over
//! this project's core (README, "Regression power") varies formulas an external core
//! does not run.
//!
//! Each command (the claim's, or a variant's own) has a [`Pool`] of long-lived workers
//! ([`worker`]): one per thread that runs units at the same time, started and greeted on
//! first use. [`System::prepare`] greets one worker of every command before any unit
//! runs, so a wrong protocol or a missing metric is an error before anything is computed.
//! Idle workers are shared by every claim that runs the same command (argv, directory,
//! time limit): a core's start-up (imports, JIT compilation) is paid once per worker and
//! run, not once per claim; each claim checks its own metrics against the worker's
//! handshake. They are killed by [`release_all`] when the run ends (and by their parent's
//! death in any case).
//!
//! Cache: a core's units are cached ([`crate::execute::cache`]) under its identity: a
//! SHA-256 of this protocol code ([`crate::build_id::EXTERNAL_HASH`]: it is not in the
//! engine hash), the spec's `external.version`, the command and the bytes of every file the
//! spec declares in `external.files` (a variant's own `files` added), together with every
//! file the command names — its program (`argv[0]`, `./core.py`) and its script
//! (`python3 core.py`). The key of a unit adds the judged content of the whole spec
//! ([`crate::spec::Claim::key_hash`]: the `external:` block with its `audit:` settings
//! included). A core without declared files is not hashable: its units always run, and
//! the run says so once. What the files do not capture (a library's version, a data set)
//! is declared in `version`.
//!
//! Seeds: a unit's seed is the first 8 bytes (little-endian) of the seed of its path
//! `master / claim / sweep / point / rep<r> / "external"` ([`crate::rng`]), the same tree
//! as the built-in systems, so the variants of a claim see the same seed at a point
//! (common random numbers) and a deterministic core gives the same bytes on every run.
pub mod audit;
pub mod protocol;
pub mod reaper;
pub mod worker;

use super::*;
use protocol::Request;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Mutex;
use worker::{CoreCommand, CoreFailure, Worker};

/// The name of the system in specs.
pub const NAME: &str = "external";

/// The CPU seconds `plan` assumes for a unit of a core it has not measured.
pub const NOMINAL_COST_S: f64 = 1e-3;

static CHECK_DETERMINISM: AtomicBool = AtomicBool::new(false);

/// `run --check-determinism`: every external core answers a sample of its units twice
/// (the first unit of each core and every unit whose seed is 0 mod 8), and a core whose
/// two answers differ is an error.
pub fn set_check_determinism(on: bool) {
    CHECK_DETERMINISM.store(on, Ordering::Relaxed);
}

/// An idle, greeted worker with the metrics its handshake offered.
struct Idle {
    worker: Worker,
    offered: Vec<String>,
}

/// The idle workers of every command, shared by the claims that run it (module docs).
static SHARED: Mutex<Vec<(CoreCommand, Vec<Idle>)>> = Mutex::new(Vec::new());

/// An idle worker of `command`, if one is kept.
fn take_shared(command: &CoreCommand) -> Option<Idle> {
    let mut shared = SHARED.lock().ok()?;
    shared
        .iter_mut()
        .find(|(c, _)| c == command)
        .and_then(|(_, v)| v.pop())
}

/// Keeps `idle` for the next unit of any claim that runs `command`.
fn keep_shared(command: &CoreCommand, idle: Idle) {
    if let Ok(mut shared) = SHARED.lock() {
        match shared.iter_mut().find(|(c, _)| c == command) {
            Some((_, v)) => v.push(idle),
            None => shared.push((command.clone(), vec![idle])),
        }
    }
}

/// Kills every idle worker of every command: the end of a run. (Busy workers are
/// dropped by their unit, and a worker dies with dpclaims in any case.)
pub fn release_all() {
    let drained: Vec<(CoreCommand, Vec<Idle>)> = SHARED
        .lock()
        .map(|mut s| std::mem::take(&mut *s))
        .unwrap_or_default();
    drop(drained);
}

/// The workers of one command.
pub struct Pool {
    pub command: CoreCommand,
    /// The declared files of this core (the claim's `external.files` and the variant's).
    files: Vec<std::path::PathBuf>,
    /// The core's identity in the result cache's keys, computed by [`Pool::hash_files`]
    /// when the claim's run is prepared (`None`: not hashable, or not yet hashed).
    identity: Mutex<Option<String>>,
    /// Metrics the spec asks of this core (checked against its handshake).
    wanted: Vec<String>,
    first_checked: AtomicBool,
}

impl std::fmt::Debug for Pool {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Pool({})", self.command.display())
    }
}

impl Pool {
    pub fn new(command: CoreCommand, wanted: Vec<String>) -> Pool {
        Pool {
            command,
            files: Vec::new(),
            identity: Mutex::new(None),
            wanted,
            first_checked: AtomicBool::new(false),
        }
    }

    /// "core `python3 core.py`: <failure>".
    fn describe(&self, f: CoreFailure) -> String {
        format!("core `{}`: {f}", self.command.display())
    }

    /// An idle worker of this command (kept by any claim), or a new one (started and
    /// greeted); either way one that offers every metric this claim wants.
    fn take(&self) -> Result<Idle, String> {
        let idle = match take_shared(&self.command) {
            Some(i) => i,
            None => {
                let mut worker = Worker::spawn(&self.command).map_err(|f| self.describe(f))?;
                let offered = protocol::handshake(&mut worker).map_err(|f| self.describe(f))?;
                Idle { worker, offered }
            }
        };
        let offered = &idle.offered;
        let missing: Vec<&str> = self
            .wanted
            .iter()
            .filter(|m| !offered.contains(m))
            .map(String::as_str)
            .collect();
        if !missing.is_empty() {
            return Err(format!(
                "core `{}` does not compute the metric(s) `{}` the spec asks for (it offers: {})",
                self.command.display(),
                missing.join("`, `"),
                if offered.is_empty() {
                    "nothing".to_string()
                } else {
                    offered.join(", ")
                }
            ));
        }
        Ok(idle)
    }

    fn give_back(&self, idle: Idle) {
        if idle.worker.alive() {
            keep_shared(&self.command, idle);
        }
    }

    /// Starts and greets one worker (kept idle for the first unit).
    pub fn prepare(&self) -> Result<(), String> {
        let w = self.take()?;
        self.give_back(w);
        Ok(())
    }

    /// Hashes the declared files, every file the command names (its program, `argv[0]`,
    /// when that is a file: `./core.py`, `bin/core`, `/opt/core`; a script it is given),
    /// the command and `version` into this core's cache identity (module docs, "Cache");
    /// no declared file leaves it uncached. A declared file that cannot be read is an
    /// error.
    fn hash_files(&self, version: Option<&str>) -> Result<(), String> {
        use sha2::{Digest, Sha256};
        let mut identity = None;
        if !self.files.is_empty() {
            let mut files = self.files.clone();
            for a in &self.command.argv {
                let p = self.command.path_of(a);
                if p.is_file() && !files.contains(&p) {
                    files.push(p);
                }
            }
            let mut h = Sha256::new();
            let mut field = |b: &[u8]| {
                h.update((b.len() as u64).to_le_bytes());
                h.update(b);
            };
            field(b"dpclaims/external-core/v1");
            // The protocol code that turns the core's answers into values: outside the
            // engine hash (build.rs), so it is part of the core's identity instead.
            field(crate::build_id::EXTERNAL_HASH.as_bytes());
            field(version.unwrap_or("").as_bytes());
            field(&(self.command.argv.len() as u64).to_le_bytes());
            for a in &self.command.argv {
                field(a.as_bytes());
            }
            for f in &files {
                let bytes =
                    crate::fsio::read(f, crate::fsio::InputKind::CoreFile).map_err(|e| {
                        format!(
                        "core `{}`: external.files: cannot read `{}` to key the result cache: {e}",
                        self.command.display(),
                        f.display()
                    )
                    })?;
                let name = f.strip_prefix(&self.command.dir).unwrap_or(f);
                field(name.to_string_lossy().as_bytes());
                field(&bytes);
            }
            identity = Some(
                h.finalize()
                    .iter()
                    .map(|b| format!("{b:02x}"))
                    .collect::<String>(),
            );
        }
        if let Ok(mut id) = self.identity.lock() {
            *id = identity;
        }
        Ok(())
    }

    /// Kills the idle workers of this command (an audit unit's end: its worlds leave
    /// nothing behind).
    pub fn release(&self) {
        let drained: Vec<Idle> = SHARED
            .lock()
            .ok()
            .and_then(|mut s| {
                s.iter_mut()
                    .find(|(c, _)| *c == self.command)
                    .map(|(_, v)| std::mem::take(v))
            })
            .unwrap_or_default();
        drop(drained);
    }

    /// One request on one worker; with `check`, asked twice and compared bit for bit.
    pub fn call(
        &self,
        req: &Request,
        wanted: &[&str],
        check: bool,
    ) -> Result<BTreeMap<String, f64>, String> {
        let mut idle = self.take()?;
        let w = &mut idle.worker;
        let out = protocol::call(w, req, wanted).map_err(|f| self.describe(f));
        let out = match out {
            Ok(first) if check => {
                let again = protocol::call(w, req, wanted).map_err(|f| self.describe(f));
                again.and_then(|second| {
                    match first
                        .iter()
                        .find(|(k, v)| second.get(*k).map(|s| s.to_bits()) != Some(v.to_bits()))
                    {
                        None => Ok(first),
                        Some((k, v)) => Err(format!(
                            "core `{}` is not deterministic: asked twice for unit `{}` \
                             (seed {}), it answered `{k}` = {v:e} then {:e}",
                            self.command.display(),
                            req.unit,
                            protocol::seed_hex(req.seed),
                            second[k]
                        )),
                    }
                })
            }
            other => other,
        };
        self.give_back(idle);
        out
    }
}

/// The validated `external:` block of a claim.
#[derive(Clone, Debug)]
pub struct ExternalSpec {
    /// The claim's command (index 0) and every variant's own command, without duplicates.
    pub commands: Vec<CoreCommand>,
    /// The declared files of each command (`external.files`, a variant's own added to
    /// the claim's), absolute or relative to the working directory.
    pub files: Vec<Vec<std::path::PathBuf>>,
    /// `external.version`: part of the cache identity.
    pub version: Option<String>,
    /// `external.cost_s`: the declared CPU seconds of one unit.
    pub cost_s: Option<f64>,
    /// `external.audit`: canary mode, each unit one audit ([`audit::spec_unit`]).
    pub audit: Option<audit::SpecAudit>,
    /// Variant name -> index in `commands`.
    pub variant_command: BTreeMap<String, usize>,
    /// The metrics the spec asks of the core.
    pub metrics: Vec<String>,
    /// Every variable the spec defines (parameters, axes, coupled): the declared
    /// parameters of the system (no constraint: the core checks its own).
    pub params: Vec<String>,
}

/// An external system (module docs).
#[derive(Debug)]
pub struct ExternalSystem {
    info: &'static SystemInfo,
    variant_command: BTreeMap<String, usize>,
    pools: Vec<Pool>,
    version: Option<String>,
    cost_s: Option<f64>,
    audit: Option<audit::SpecAudit>,
    /// The CPU seconds of one unit measured by [`System::measure_cost`] (`plan`), with
    /// the unit it was measured on.
    measured: Mutex<Option<(f64, String)>>,
    /// The first failure of this run: the units after it are not sent (a crashed or
    /// hanging core would otherwise be restarted, and waited for, once per unit).
    failed: Mutex<Option<String>>,
}

fn leak(s: &str) -> &'static str {
    Box::leak(s.to_string().into_boxed_str())
}

impl ExternalSystem {
    /// Builds the system of one claim, for the life of the process (its declaration is
    /// `'static` like every system's; a claim file is loaded once per run).
    pub fn leaked(spec: ExternalSpec) -> &'static ExternalSystem {
        let params: Vec<ParamInfo> = spec
            .params
            .iter()
            .map(|p| ParamInfo {
                name: leak(p),
                kind: ParamKind::Finite,
                optional: true,
                doc: "sent to the external core",
            })
            .collect();
        let metrics: Vec<MetricInfo> = match spec.audit {
            Some(_) => audit::SPEC_AUDIT_METRICS
                .iter()
                .map(|(name, doc)| MetricInfo { name, doc })
                .collect(),
            None => spec
                .metrics
                .iter()
                .map(|m| MetricInfo {
                    name: leak(m),
                    doc: "computed by the external core",
                })
                .collect(),
        };
        let wanted = match spec.audit {
            Some(_) => vec!["score".to_string()],
            None => spec.metrics.clone(),
        };
        let cmds: Vec<String> = spec.commands.iter().map(|c| c.display()).collect();
        let info = Box::leak(Box::new(SystemInfo {
            name: NAME,
            model: "not_applicable",
            description: leak(&format!(
                "external core over {} (`{}`)",
                protocol::PROTOCOL,
                cmds.join("`, `")
            )),
            needs_target: false,
            params: Box::leak(params.into_boxed_slice()),
            options: &[],
            metrics: Box::leak(metrics.into_boxed_slice()),
        }));
        let pools = spec
            .commands
            .into_iter()
            .zip(spec.files)
            .map(|(c, files)| Pool {
                files,
                ..Pool::new(c, wanted.clone())
            })
            .collect();
        Box::leak(Box::new(ExternalSystem {
            info,
            variant_command: spec.variant_command,
            pools,
            version: spec.version,
            cost_s: spec.cost_s,
            audit: spec.audit,
            measured: Mutex::new(None),
            failed: Mutex::new(None),
        }))
    }

    /// The workers of the variant `variant`.
    pub fn pool(&self, variant: &str) -> &Pool {
        &self.pools[self.variant_command.get(variant).copied().unwrap_or(0)]
    }
}

/// `<claim>/<variant>/<sweep>/<point>/<replicate>` from a unit's seed path
/// (`master / claim / sweep / point label / rep<r>`, [`crate::plan`]) and its variant.
fn unit_id(u: &UnitInput) -> String {
    let l = u.seeds.labels();
    let get = |i: usize| l.get(i).map(String::as_str).unwrap_or("");
    let rep = get(3);
    format!(
        "{}/{}/{}/{}/{}",
        get(0),
        u.variant,
        get(1),
        get(2),
        rep.strip_prefix("rep").unwrap_or(rep)
    )
}

/// The 64-bit seed of a seed path (module docs).
pub fn seed_of(path: &crate::rng::SeedPath) -> u64 {
    let s = path.child("external").seed();
    u64::from_le_bytes(s[..8].try_into().expect("8 bytes"))
}

impl System for ExternalSystem {
    fn info(&self) -> &'static SystemInfo {
        self.info
    }

    fn cost(&self, _: &CostInput) -> Cost {
        // The declared cost_s, else the one measured by `plan` (measure_cost), else a
        // nominal figure that keeps the plan's totals meaningful as unit counts (cost_basis
        // says which).
        let measured = self
            .measured
            .lock()
            .ok()
            .and_then(|m| m.as_ref().map(|m| m.0));
        match &self.audit {
            // Canary mode: a unit is 2 x trials requests, each a core's run (cost_s is
            // one request's, docs/external-cores.md), and it holds the scores of both
            // worlds with their sorted copies; a measured unit (a whole audit) is taken
            // when it is larger.
            Some(a) => {
                let requests = 2.0 * a.trials as f64;
                Cost {
                    seconds: (requests * self.cost_s.unwrap_or(NOMINAL_COST_S))
                        .max(measured.unwrap_or(0.0)),
                    bytes: 1e5 + Cost::f64s(3.0 * requests),
                }
            }
            None => Cost {
                seconds: self.cost_s.or(measured).unwrap_or(NOMINAL_COST_S),
                bytes: 1e5,
            },
        }
    }

    fn cost_basis(&self) -> Option<String> {
        let requests = self.audit.as_ref().map(|a| 2 * a.trials);
        let per = match requests {
            Some(r) => format!(" a request, {r} requests a unit (canary mode: 2 x trials)"),
            None => " a unit".to_string(),
        };
        if let Some(c) = self.cost_s {
            return Some(format!("external core: declared cost_s = {c} s{per}"));
        }
        match self.measured.lock().ok().and_then(|m| m.clone()) {
            Some((s, unit)) => Some(format!(
                "external core: measured, one calibration unit ({unit}) took {s:.3} s; assumed for every unit"
            )),
            None => Some(format!(
                "external core: not measured (no cost_s declared; `dpclaims plan --calibrate` times one unit): a nominal {NOMINAL_COST_S} s{per}"
            )),
        }
    }

    fn cost_field(&self) -> Option<(String, String)> {
        self.audit.as_ref().map(|a| {
            (
                "external.audit.trials".to_string(),
                format!(
                    "trials = {}: {} core requests a unit",
                    a.trials,
                    2 * a.trials
                ),
            )
        })
    }

    fn wants_cost_measurement(&self) -> bool {
        self.cost_s.is_none()
    }

    fn record_measured_cost(&self, seconds: f64, unit: &str) {
        if let Ok(mut m) = self.measured.lock() {
            *m = Some((seconds, unit.to_string()));
        }
    }

    fn run(&self, u: &UnitInput) -> Result<BTreeMap<String, f64>, SystemError> {
        let pool = self.pool(u.variant);
        let seed = seed_of(&u.seeds);
        let unit = unit_id(u);
        let req = Request {
            unit: &unit,
            seed,
            params: u.vars,
            options: u.options,
        };
        let wanted: Vec<&str> = u.metrics.iter().map(String::as_str).collect();
        let check = CHECK_DETERMINISM.load(Ordering::Relaxed)
            && (seed % 8 == 0 || !pool.first_checked.swap(true, Ordering::Relaxed));
        if let Some(first) = self.failed.lock().ok().and_then(|f| f.clone()) {
            return Err(SystemError::Invalid(format!("not run: {first}")));
        }
        let out = match &self.audit {
            Some(a) => audit::spec_unit(pool, a, &unit, &u.seeds, u.vars, u.options)
                .map_err(|e| format!("core `{}`: audit: {e}", pool.command.display())),
            None => pool.call(&req, &wanted, check),
        };
        out.map_err(|e| {
            if let Ok(mut f) = self.failed.lock() {
                f.get_or_insert_with(|| format!("unit `{unit}` failed first: {e}"));
            }
            SystemError::Invalid(e)
        })
    }

    fn accepts_any_option(&self) -> bool {
        true
    }

    fn prepare(&self) -> Result<(), SystemError> {
        if let Ok(mut f) = self.failed.lock() {
            *f = None;
        }
        for p in &self.pools {
            p.hash_files(self.version.as_deref())
                .map_err(SystemError::Invalid)?;
            p.prepare().map_err(SystemError::Invalid)?;
        }
        Ok(())
    }

    fn variant_tag(&self, variant: &str) -> String {
        self.pool(variant).command.display()
    }

    /// The core is outside the build's identity (and its variants share seeds and
    /// parameters while running different programs): cached only under the hash of its
    /// declared files, command and version (module docs, "Cache").
    fn cache_identity(&self, variant: &str) -> Option<String> {
        self.pool(variant)
            .identity
            .lock()
            .ok()
            .and_then(|i| i.clone())
    }

    /// The claim's run ended: its idle workers are kept for the next claim that runs
    /// the same command ([`release_all`] ends them with the run).
    fn release(&self) {}
}
