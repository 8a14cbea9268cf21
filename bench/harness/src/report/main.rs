//! The report: reads `runs.jsonl` (one line per measured run, written by `bench/run`) and
//! `env.json` (machine and peer versions) from a results directory, and writes
//! `results.md` (medians per figure over the runs, the ratios against issue 7's targets)
//! and `chart.png` there.
//!
//! Usage: `report RESULTS_DIR`.

#![forbid(unsafe_code)]

mod chart;
mod tables;

use std::collections::BTreeMap;
use std::path::Path;

use serde_json::Value;

/// Every run of one (server, kind), in the order measured. Kinds: `stdio-pinned`, `stdio`,
/// `http`.
pub(crate) struct Runs {
    by_key: BTreeMap<(String, String), Vec<Value>>,
    /// Servers in the order they first appear.
    pub(crate) order: Vec<String>,
}

impl Runs {
    /// The median over the runs of the number at `path` (`/`-separated), if any run has it.
    pub(crate) fn median(&self, server: &str, kind: &str, path: &str) -> Option<f64> {
        let runs = self.by_key.get(&(server.to_owned(), kind.to_owned()))?;
        let mut values: Vec<f64> = runs
            .iter()
            .filter_map(|run| run.pointer(&format!("/{path}")).and_then(Value::as_f64))
            .collect();
        median(&mut values)
    }

    /// The median over the rounds of `a`'s figure at `path` divided by `b`'s in the same
    /// round (`bench/run` measures the servers of a round back to back, seconds apart, so a
    /// host whose speed changes over minutes moves both alike); `None` without a pair.
    pub(crate) fn paired_ratio(&self, a: &str, b: &str, kind: &str, path: &str) -> Option<f64> {
        let figure = |server: &str| -> Option<Vec<Option<f64>>> {
            let runs = self.by_key.get(&(server.to_owned(), kind.to_owned()))?;
            Some(
                runs.iter()
                    .map(|run| run.pointer(&format!("/{path}")).and_then(Value::as_f64))
                    .collect(),
            )
        };
        let (a, b) = (figure(a)?, figure(b)?);
        let mut ratios: Vec<f64> = a
            .iter()
            .zip(&b)
            .filter_map(|(a, b)| Some(a.as_ref()? / b.as_ref()?))
            .filter(|r| r.is_finite())
            .collect();
        median(&mut ratios)
    }

    /// How many runs of (server, kind) there are.
    pub(crate) fn count(&self, server: &str, kind: &str) -> usize {
        self.by_key
            .get(&(server.to_owned(), kind.to_owned()))
            .map_or(0, Vec::len)
    }

    /// The first text at `path` in any run (e.g. why an era is unsupported).
    pub(crate) fn text(&self, server: &str, kind: &str, path: &str) -> Option<String> {
        let runs = self.by_key.get(&(server.to_owned(), kind.to_owned()))?;
        runs.iter()
            .find_map(|run| run.pointer(&format!("/{path}")).and_then(Value::as_str))
            .map(str::to_owned)
    }
}

/// The median of `values` (sorted in place); `None` when empty.
fn median(values: &mut [f64]) -> Option<f64> {
    if values.is_empty() {
        return None;
    }
    values.sort_by(f64::total_cmp);
    let mid = values.len() / 2;
    Some(if values.len() % 2 == 1 {
        values[mid]
    } else {
        (values[mid - 1] + values[mid]) / 2.0
    })
}

fn main() -> std::io::Result<()> {
    let dir = std::env::args()
        .nth(1)
        .unwrap_or_else(|| "bench/results".into());
    let dir = Path::new(&dir);
    let mut runs = Runs {
        by_key: BTreeMap::new(),
        order: Vec::new(),
    };
    for line in std::fs::read_to_string(dir.join("runs.jsonl"))?.lines() {
        if line.trim().is_empty() {
            continue;
        }
        let run: Value = serde_json::from_str(line).map_err(std::io::Error::other)?;
        let server = run["server"].as_str().unwrap_or("?").to_owned();
        let kind = run["kind"].as_str().unwrap_or("?").to_owned();
        if !runs.order.contains(&server) {
            runs.order.push(server.clone());
        }
        runs.by_key
            .entry((server, kind))
            .or_default()
            .push(run["figures"].clone());
    }
    let env: Value = serde_json::from_str(&std::fs::read_to_string(dir.join("env.json"))?)
        .map_err(std::io::Error::other)?;
    std::fs::write(dir.join("results.md"), tables::markdown(&runs, &env))?;
    chart::draw(&runs, &dir.join("chart.png")).map_err(|e| std::io::Error::other(e.to_string()))?;
    eprintln!(
        "wrote {} and {}",
        dir.join("results.md").display(),
        dir.join("chart.png").display()
    );
    Ok(())
}
