//! Dotted-key overrides: sweep axes, `[[configs]]` `set` tables and `--set key=value`.
//!
//! All three name a place in the scenario document with a dotted key (`hypervisor.vwfi`,
//! `vm.0.vcpus`, `platform.costs.lr_write.ns`). A key may only point into the sections a model
//! reads (`hypervisor`, `vm`, `workload`) or into `platform` (`profile`, `costs.NAME…`,
//! `params.NAME…`). Whether the field itself exists is decided when each point is prepared: the
//! model's sections are deserialised strictly, and [`crate::runner`] checks that every cost or
//! parameter override names one the model actually used. So a typo is an error, never a row
//! labelled with a value that was not applied.

/// Top-level sections an override may point into.
pub const OVERRIDABLE: &[&str] = &["platform", "hypervisor", "vm", "workload"];

/// The longest value an override may have when shown (it becomes part of every point's name
/// and parameters).
pub use results::vocab::sweep::MAX_VALUE_CHARS;

/// Why an override key or value is refused; the text names the key and what was expected.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum OverrideError {
    #[error("`{0}` is not a dotted key (e.g. `hypervisor.vwfi`)")]
    NotDotted(String),
    #[error("`{key}`: `{section}` is not a section an override can set; expected one of {expected}{hint}")]
    Section { key: String, section: String, expected: String, hint: String },
    #[error("`{0}`: name a field inside the section (e.g. `{0}.FIELD`)")]
    NoField(String),
    #[error("`{0}`: under `platform` an override sets `platform.profile`, `platform.board`, `platform.costs.NAME[.FIELD]` or `platform.params.NAME[.FIELD]`")]
    Platform(String),
    #[error("`{0}`: expected KEY=VALUE (e.g. hypervisor.vwfi=native)")]
    NoEquals(String),
    /// The value itself (empty, too long, neither TOML nor a bare word).
    #[error(transparent)]
    Value(#[from] results::vocab::sweep::ValueError),
}

/// Check the shape of an override key; the message says what was expected.
pub fn check_key(key: &str) -> Result<(), OverrideError> {
    let parts: Vec<&str> = key.split('.').collect();
    if key.is_empty() || parts.iter().any(|p| p.is_empty()) {
        return Err(OverrideError::NotDotted(key.to_string()));
    }
    if !OVERRIDABLE.contains(&parts[0]) {
        let hint = crate::scenario::did_you_mean(parts[0], OVERRIDABLE.iter().copied());
        return Err(OverrideError::Section { key: key.to_string(), section: parts[0].to_string(), expected: OVERRIDABLE.join(", "), hint });
    }
    if parts.len() == 1 {
        return Err(OverrideError::NoField(key.to_string()));
    }
    if parts[0] == "platform" {
        match (parts[1], parts.len()) {
            ("profile" | "board", 2) => {}
            ("costs" | "params", n) if n >= 3 => {}
            _ => return Err(OverrideError::Platform(key.to_string())),
        }
    }
    Ok(())
}

/// Parse one `--set key=value`. The value is read as a TOML value (`1000`, `0.5`, `true`,
/// `"text"`, `[1, 2]`, `{ ns = 5, source = "...", basis = "guess" }`); a bare word that is not
/// TOML (`native`) is taken as a string, as a shell user would expect.
pub fn parse_set(arg: &str) -> Result<(String, toml::Value), OverrideError> {
    let (key, raw) = arg.split_once('=').ok_or_else(|| OverrideError::NoEquals(arg.to_string()))?;
    let key = key.trim();
    check_key(key)?;
    Ok((key.to_string(), parse_value(key, raw)?))
}

/// The value of one `KEY=VALUE` override, read as [`parse_set`] reads it: the shared
/// vocabulary's reader (`results::vocab::sweep::parse_value`, also `irqlab run --set`'s).
pub fn parse_value(key: &str, raw: &str) -> Result<toml::Value, OverrideError> {
    Ok(results::vocab::sweep::parse_value(key, raw)?)
}

/// Whether two dotted keys touch the same place (one is the other or a prefix of it).
pub fn keys_overlap(a: &str, b: &str) -> bool {
    let (short, long) = if a.len() <= b.len() { (a, b) } else { (b, a) };
    long == short || long.starts_with(&format!("{short}."))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keys_must_point_into_model_sections_or_platform() {
        check_key("hypervisor.vwfi").unwrap();
        check_key("vm.0.vcpus").unwrap();
        check_key("platform.costs.lr_write").unwrap();
        check_key("platform.costs.lr_write.ns").unwrap();
        check_key("platform.profile").unwrap();
        let e = check_key("hypervisr.idle").unwrap_err().to_string();
        assert!(e.contains("`hypervisr`") && e.contains("did you mean `hypervisor`"), "{e}");
        assert!(check_key("hypervisor").unwrap_err().to_string().contains("FIELD"));
        assert!(check_key("platform.costs").unwrap_err().to_string().contains("platform.costs.NAME"));
        assert!(check_key("platform.colour").is_err());
        assert!(check_key("scenario.seed").is_err());
        assert!(check_key("a..b").is_err());
        assert!(check_key("").is_err());
    }

    #[test]
    fn set_values_are_typed_like_the_file() {
        assert_eq!(parse_set("workload.samples=1000").unwrap().1, toml::Value::Integer(1000));
        assert_eq!(parse_set("workload.period_us=0.5").unwrap().1, toml::Value::Float(0.5));
        assert_eq!(parse_set("hypervisor.vwfi=native").unwrap().1, toml::Value::String("native".into()));
        assert_eq!(parse_set("workload.samples=\"1000\"").unwrap().1, toml::Value::String("1000".into()));
        assert!(parse_set("workload.samples").unwrap_err().to_string().contains("KEY=VALUE"));
        assert!(parse_set("workload.samples=").unwrap_err().to_string().contains("empty"));
        assert!(parse_set("workload.x=a b").is_err());
        assert!(parse_set(&format!("workload.x={}", "a".repeat(300))).unwrap_err().to_string().contains("longer"));
        let t = parse_set("platform.costs.exit={ ns = 5, source = \"x\", basis = \"guess\" }").unwrap().1;
        assert!(t.is_table());
    }

    #[test]
    fn overlap() {
        assert!(keys_overlap("hypervisor.vwfi", "hypervisor.vwfi"));
        assert!(keys_overlap("platform.costs.x", "platform.costs.x.ns"));
        assert!(!keys_overlap("hypervisor.vwfi", "hypervisor.vwfi_x"));
    }
}
