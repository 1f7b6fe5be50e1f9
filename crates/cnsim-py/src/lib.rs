//! PyO3 glue: `cnsim._core.Simulation(core_config_json).run()` → `{"summary": json, "series": …}`.
//! The GIL is released for the whole run; progress and interrupts go through atomics so that a
//! Python thread can draw a progress bar and forward Ctrl-C. Every engine error becomes a
//! `ValueError` with the engine's message (bad input), or `RuntimeError("interrupted")`.

use std::sync::atomic::Ordering;
use std::sync::Arc;

use cnsim_core::{run_json, Error, RunControl};
use pyo3::exceptions::{PyRuntimeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyDict, PyList};

#[pyclass(frozen)]
struct Simulation {
    config: String,
    ctl: Arc<RunControl>,
}

#[pymethods]
impl Simulation {
    #[new]
    fn new(config: String) -> PyResult<Self> {
        // validate eagerly so that bad input fails before a thread is started
        let cfg = cnsim_core::CoreConfig::from_json(&config).map_err(to_py)?;
        cnsim_core::Simulator::new(&cfg).map_err(to_py)?;
        Ok(Simulation { config, ctl: Arc::new(RunControl::default()) })
    }

    fn run<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        let config = self.config.clone();
        let ctl = self.ctl.clone();
        let result = py.allow_threads(move || run_json(&config, &ctl)).map_err(to_py)?;
        let out = PyDict::new(py);
        out.set_item("summary", serde_json::to_string(&result.summary).map_err(|e| PyRuntimeError::new_err(e.to_string()))?)?;
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

fn to_py(e: Error) -> PyErr {
    match e {
        Error::Interrupted => PyRuntimeError::new_err("interrupted"),
        other => PyValueError::new_err(other.to_string()),
    }
}

#[pyfunction]
fn version() -> &'static str {
    cnsim_core::VERSION
}

#[pymodule]
fn _core(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<Simulation>()?;
    m.add_function(wrap_pyfunction!(version, m)?)?;
    Ok(())
}
