//! PyO3 glue: `cnsim._core.Simulation(core_config).run()` (the config as JSON text or as a dict)
//! → `{"summary": json, "series": …,
//! "loop_s": the event loop's wall-clock seconds, "run_s": the whole call's, waits for the GIL
//! excluded}`.
//! The GIL is released for the whole run; progress and interrupts go through atomics so that a
//! Python thread can draw a progress bar and forward Ctrl-C.
//!
//! One exception type per kind of failure crosses the boundary (issue 13), so that the front end
//! never has to parse a message: `ConfigError` (a `ValueError` carrying `key`, `value` and
//! `expected`: bad input, exit 2), `Interrupted` (the run was stopped through `interrupt()`), and
//! `EngineError` (a core config that does not match the schema, or a panic inside the engine —
//! a bug, caught here so that it never unwinds into Python).

use std::sync::atomic::Ordering;
use std::sync::{Arc, Mutex};
use std::time::Instant;

use cnsim_core::{Error, RunControl, Simulator};
use pyo3::create_exception;
use pyo3::exceptions::{PyRuntimeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyDict, PyList};

create_exception!(
    _core,
    ConfigError,
    PyValueError,
    "A configuration the engine refuses: `args` = (message, key, value, expected)."
);
create_exception!(
    _core,
    Interrupted,
    PyRuntimeError,
    "The run was stopped through `Simulation.interrupt()`."
);
create_exception!(
    _core,
    EngineError,
    PyRuntimeError,
    "An internal error of the engine (a core config off the schema, or a panic): a bug."
);

/// One run: the engine is built once, in the constructor (so that bad input fails before a
/// thread is started), and consumed by `run()`.
#[pyclass(frozen)]
struct Simulation {
    sim: Mutex<Option<Simulator>>,
    ctl: Arc<RunControl>,
}

#[pymethods]
impl Simulation {
    /// `config`: the core config as JSON text, or as the front end's dict (read directly, without
    /// JSON between them: at 2,048 hosts encoding and parsing it cost milliseconds).
    #[new]
    fn new(config: &Bound<'_, PyAny>) -> PyResult<Self> {
        let cfg = if let Ok(text) = config.downcast::<pyo3::types::PyString>() {
            let text = text.to_cow()?;
            guarded(|| cnsim_core::CoreConfig::from_json(&text))?
        } else {
            let mut data = pythonize::Depythonizer::from_object(config);
            guarded(|| cnsim_core::CoreConfig::from_deserializer(&mut data))?
        };
        let sim = guarded(|| Simulator::new(&cfg))?;
        Ok(Simulation {
            sim: Mutex::new(Some(sim)),
            ctl: Arc::new(RunControl::default()),
        })
    }

    fn run<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        let sim = self
            .sim
            .lock()
            .map_err(|_| EngineError::new_err("the simulation's lock is poisoned"))?
            .take()
            .ok_or_else(|| {
                EngineError::new_err("this Simulation has already run; build a new one")
            })?;
        let ctl = self.ctl.clone();
        let (result, loop_s, finished_s) = py.allow_threads(move || {
            guarded(move || {
                let mut sim = sim;
                let started = Instant::now();
                sim.run(&ctl)?;
                let loop_s = started.elapsed().as_secs_f64();
                let result = sim.finish();
                Ok((result, loop_s, started.elapsed().as_secs_f64()))
            })
        })?;
        // the conversion is timed from here, once the GIL is back: a calling thread that held it
        // meanwhile (importing what the results need, `cnsim.runner`) is not the engine's time
        let converting = Instant::now();
        let out = PyDict::new(py);
        // wall-clock, for the manifest only (never the summary): the event loop alone, without
        // building the engine or computing its results
        out.set_item("loop_s", loop_s)?;
        out.set_item(
            "summary",
            serde_json::to_string(&result.summary)
                .map_err(|e| PyRuntimeError::new_err(e.to_string()))?,
        )?;
        let series = PyDict::new(py);
        for (kind, s) in &result.series {
            let d = PyDict::new(py);
            d.set_item("entities", PyList::new(py, &s.entities)?)?;
            d.set_item("bins", result.bins)?;
            d.set_item("bin_s", result.bin_s)?;
            // the last bin ends with the run, which may stop inside it (a run to completion)
            d.set_item("end_s", result.summary.duration_s)?;
            let cols = PyDict::new(py);
            for (name, values) in &s.columns {
                let bytes: Vec<u8> = values.iter().flat_map(|v| v.to_le_bytes()).collect();
                cols.set_item(name, PyBytes::new(py, &bytes))?;
            }
            d.set_item("columns", cols)?;
            series.set_item(kind, d)?;
        }
        out.set_item("series", series)?;
        out.set_item("run_s", finished_s + converting.elapsed().as_secs_f64())?;
        Ok(out)
    }

    fn progress_ps(&self) -> u64 {
        self.ctl.progress_ps.load(Ordering::Relaxed)
    }

    /// The unit (ps) in which the engine keeps waiting frames' times (`Simulator::voq_time_unit`;
    /// `None` for the wide layout), for the budget's estimate to be checked against.
    fn voq_time_unit(&self) -> PyResult<Option<u64>> {
        let sim = self
            .sim
            .lock()
            .map_err(|_| EngineError::new_err("the simulation's lock is poisoned"))?;
        let sim = sim.as_ref().ok_or_else(|| {
            EngineError::new_err("this Simulation has already run; build a new one")
        })?;
        Ok(sim.voq_time_unit())
    }

    fn interrupt(&self) {
        self.ctl.interrupt.store(true, Ordering::Relaxed);
    }
}

/// Run `f`, turning an engine error into its exception and a panic into `EngineError`.
fn guarded<T>(f: impl FnOnce() -> cnsim_core::Result<T>) -> PyResult<T> {
    match std::panic::catch_unwind(std::panic::AssertUnwindSafe(f)) {
        Ok(Ok(v)) => Ok(v),
        Ok(Err(e)) => Err(to_py(e)),
        Err(panic) => {
            let what = panic
                .downcast_ref::<&str>()
                .map(|s| s.to_string())
                .or_else(|| panic.downcast_ref::<String>().cloned())
                .unwrap_or_else(|| "unknown panic".into());
            Err(EngineError::new_err(format!("the engine failed: {what}")))
        }
    }
}

fn to_py(e: Error) -> PyErr {
    match e {
        Error::Interrupted => Interrupted::new_err("interrupted"),
        Error::Config {
            ref key,
            ref value,
            ref expected,
        } => ConfigError::new_err((e.to_string(), key.clone(), value.clone(), expected.clone())),
        Error::Parse(_) => EngineError::new_err(e.to_string()),
    }
}

/// A fat tree as the engine builds it (`topology::fattree`): host and switch names, links in
/// declaration order and d-mod-k routes — the one construction, read by the front end for
/// names, port counts and the paths of the fair-share references (issue 11).
#[pyclass(frozen)]
struct FatTree {
    topo: cnsim_core::topology::Topology,
}

#[pymethods]
impl FatTree {
    #[new]
    fn new(radix: u32, levels: u32, merged_top: bool) -> PyResult<Self> {
        use cnsim_core::topology::{FatTreeConfig, Routing, TopologyConfig};
        let ft = FatTreeConfig {
            radix,
            levels,
            merged_top,
            rate_bps: 1,
            delay_ps: 0,
        };
        let shape = cnsim_core::topology::fattree::Shape::new(&ft);
        let cfg = TopologyConfig {
            switches: Vec::new(),
            nodes: (0..shape.hosts()).map(|q| q.to_string()).collect(),
            links: Vec::new(),
            legacy: Vec::new(),
            routing: Routing::Dmodk,
            fat_tree: Some(ft),
        };
        let topo = guarded(|| cnsim_core::topology::Topology::build(&cfg))?;
        Ok(FatTree { topo })
    }

    #[getter]
    fn hosts(&self) -> usize {
        self.topo.nodes.len()
    }

    fn host_names(&self) -> Vec<String> {
        self.topo.nodes.clone()
    }

    fn switch_names(&self) -> Vec<String> {
        self.topo.switches.clone()
    }

    /// Every link as (a, b), in the engine's declaration order.
    fn links(&self) -> Vec<(String, String)> {
        let name = |d| self.topo.device_name(d).to_string();
        self.topo
            .ports
            .iter()
            .step_by(2) // each link is two ports, a→b then b→a
            .map(|p| (name(p.owner), name(p.peer)))
            .collect()
    }

    /// Every device on the d-mod-k route from host `src` to host `dst` (both included).
    fn route(&self, src: usize, dst: usize) -> PyResult<Vec<String>> {
        let n = self.topo.nodes.len();
        if src >= n || dst >= n {
            return Err(PyValueError::new_err(format!("hosts are 0..{}", n - 1)));
        }
        if src == dst {
            return Ok(vec![self.topo.nodes[src].clone()]);
        }
        let switches = self.topo.path(src as u32, dst as u32).unwrap_or_default();
        let mut out = vec![self.topo.nodes[src].clone()];
        out.extend(
            switches
                .iter()
                .map(|&s| self.topo.switches[s as usize].clone()),
        );
        out.push(self.topo.nodes[dst].clone());
        Ok(out)
    }
}

#[pyfunction]
fn version() -> &'static str {
    cnsim_core::VERSION
}

/// What the run budget (`cnsim.budget`) needs to know of the scheme of a core config's `[cm]`
/// table (JSON), in the engine's own words: `limits_every_flow` — every flow gets a rate
/// limiter with its first frame and keeps it (`SchemeSpec::limiter_from_start`); and
/// `probe_period_ps` — a sending flow probes its path this often (`SchemeSpec::probe_period`),
/// or `None`.
#[pyfunction]
fn scheme_traits(py: Python<'_>, cm: String) -> PyResult<Bound<'_, PyDict>> {
    let scheme = guarded(|| {
        let cfg: cnsim_core::cm::CmConfig =
            serde_json::from_str(&cm).map_err(|e| Error::Parse(e.to_string()))?;
        cnsim_core::cm::Scheme::from_config(&cfg)
    })?;
    let traits = PyDict::new(py);
    traits.set_item("limits_every_flow", scheme.limiter_from_start())?;
    traits.set_item("probe_period_ps", scheme.probe_period().map(|t| t.0))?;
    Ok(traits)
}

#[pymodule]
fn _core(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<Simulation>()?;
    m.add_class::<FatTree>()?;
    m.add("ConfigError", m.py().get_type::<ConfigError>())?;
    m.add("Interrupted", m.py().get_type::<Interrupted>())?;
    m.add("EngineError", m.py().get_type::<EngineError>())?;
    m.add_function(wrap_pyfunction!(version, m)?)?;
    m.add_function(wrap_pyfunction!(scheme_traits, m)?)?;
    Ok(())
}
