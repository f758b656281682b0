//! `irqlab scenarios`: the shipped scenarios, one line each.
use sim::scenario::{Scenario, SHIPPED_SCENARIOS};

use crate::term::out;
use crate::{CliError, Outcome};

pub fn run() -> Result<Outcome, CliError> {
    let w = SHIPPED_SCENARIOS.iter().map(|(n, _)| n.len()).max().unwrap_or(0);
    for (name, text) in SHIPPED_SCENARIOS {
        match Scenario::parse(text, &format!("scenarios/{name}.toml"), name, None) {
            Ok(sc) => {
                let points = sc.point_count().unwrap_or(0);
                out(&format!("{name:<w$}  {} ({} point{}, model {})\n", sc.header.description, points, if points == 1 { "" } else { "s" }, sc.header.model))?
            }
            Err(e) => out(&format!("{name:<w$}  (invalid: {e})\n"))?,
        }
    }
    Ok(Outcome::Ok)
}
