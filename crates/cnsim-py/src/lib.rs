//! PyO3 glue: `cnsim._core.Simulation(core_config_json).run()` → `{"summary": json, "series": …}`.
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
    #[new]
    fn new(config: String) -> PyResult<Self> {
        let sim = guarded(|| Simulator::new(&cnsim_core::CoreConfig::from_json(&config)?))?;
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
        let result = py.allow_threads(move || {
            guarded(move || {
                let mut sim = sim;
                sim.run(&ctl)?;
                Ok(sim.finish())
            })
        })?;
        let out = PyDict::new(py);
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
            let cols = PyDict::new(py);
            for (name, values) in &s.columns {
                let bytes: Vec<u8> = values.iter().flat_map(|v| v.to_le_bytes()).collect();
                cols.set_item(name, PyBytes::new(py, &bytes))?;
            }
            d.set_item("columns", cols)?;
            series.set_item(kind, d)?;
        }
        out.set_item("series", series)?;
        Ok(out)
    }

    fn progress_ps(&self) -> u64 {
        self.ctl.progress_ps.load(Ordering::Relaxed)
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

#[pyfunction]
fn version() -> &'static str {
    cnsim_core::VERSION
}

#[pymodule]
fn _core(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<Simulation>()?;
    m.add("ConfigError", m.py().get_type::<ConfigError>())?;
    m.add("Interrupted", m.py().get_type::<Interrupted>())?;
    m.add("EngineError", m.py().get_type::<EngineError>())?;
    m.add_function(wrap_pyfunction!(version, m)?)?;
    Ok(())
}
