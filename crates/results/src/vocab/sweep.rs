//! The input words of a sweep, shared by `irqlab sim` (a scenario's `[sweep]`, `--set`) and
//! `irqlab run` (a matrix file's `[sweep]`, `--set`): the axes and their one expansion, how a
//! value is shown in a point's name, how a `KEY=VALUE` value is read, and the did-you-mean hint
//! every reader of a key gives. They lived in `sim::scenario` and made `kvm` depend on the whole
//! simulator for them (issue 44 item 2); here they sit below both.

/// Sweep axes, `(key, values)` in file order, read as one mixed-radix number with the first axis
/// slowest: the one expansion `irqlab sim` (a scenario's `[sweep]`) and `irqlab run --matrix` (a
/// matrix file's `[sweep]`, `kvm::plan`) share, so that a point's position and name mean the same
/// in both. What a combination is applied to — a scenario document, a run table — is the caller's.
#[derive(Debug, Clone, Copy)]
pub struct Axes<'a>(pub &'a [(String, Vec<toml::Value>)]);

impl<'a> Axes<'a> {
    /// Number of combinations (1 with no axis), or `None` when it does not fit in a usize.
    pub fn combos(&self) -> Option<usize> {
        self.0.iter().try_fold(1usize, |n, (_, v)| n.checked_mul(v.len()))
    }

    /// Combination `i` (taken modulo [`combos`](Self::combos)): each axis's key and value. Every
    /// axis must have at least one value (the readers refuse an empty one).
    pub fn combo(&self, i: usize) -> Vec<(&'a str, &'a toml::Value)> {
        let combos = self.combos().unwrap_or(1).max(1);
        let mut rest = i % combos;
        let mut radix = combos;
        let mut combo = Vec::with_capacity(self.0.len());
        for (key, values) in self.0 {
            radix /= values.len();
            combo.push((key.as_str(), &values[rest / radix]));
            rest %= radix;
        }
        combo
    }

    /// A combination's part of a point's name: `key=value` per axis, a dotted key by its last part.
    pub fn label(combo: &[(&str, &toml::Value)]) -> Vec<String> {
        combo.iter().map(|(k, v)| format!("{}={}", k.rsplit('.').next().unwrap_or(k), show(v))).collect()
    }
}

/// A sweep value as a point's name and parameters write it: a string bare, anything else as TOML.
pub fn show(v: &toml::Value) -> String {
    match v {
        toml::Value::String(s) => s.clone(),
        other => other.to_string(),
    }
}

/// The longest value one `KEY=VALUE` override (or a scenario's string value) may have.
pub const MAX_VALUE_CHARS: usize = 256;

/// A `KEY=VALUE` value that cannot be read.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ValueError {
    #[error("`{0}`: empty value")]
    Empty(String),
    #[error("`{0}`: value longer than {MAX_VALUE_CHARS} characters")]
    TooLong(String),
    #[error("`{key}`: value `{raw}` is neither TOML nor a bare word: {message}")]
    NotAValue { key: String, raw: String, message: String },
}

/// The value of one `KEY=VALUE` override, read as a TOML value (`1000`, `0.5`, `true`, `"text"`,
/// `[1, 2]`, `{ ns = 5 }`); a bare word that is not TOML (`native`) is taken as a string, as a
/// shell user would expect. Used by `irqlab sim --set` and `irqlab run --set`.
pub fn parse_value(key: &str, raw: &str) -> Result<toml::Value, ValueError> {
    let raw = raw.trim();
    if raw.is_empty() {
        return Err(ValueError::Empty(key.to_string()));
    }
    if raw.chars().count() > MAX_VALUE_CHARS {
        return Err(ValueError::TooLong(key.to_string()));
    }
    match toml::from_str::<toml::Table>(&format!("v = {raw}")) {
        Ok(mut t) => Ok(t.remove("v").unwrap_or(toml::Value::String(String::new()))),
        Err(_) if raw.chars().all(|c| c.is_alphanumeric() || "-_.:/+".contains(c)) => Ok(toml::Value::String(raw.to_string())),
        Err(e) => Err(ValueError::NotAValue { key: key.to_string(), raw: raw.to_string(), message: e.message().to_string() }),
    }
}

/// ", did you mean `x`?" when one of `known` is close to `got` (Jaro–Winkler above 0.8), else "".
pub fn did_you_mean<'a>(got: &str, known: impl IntoIterator<Item = &'a str>) -> String {
    known
        .into_iter()
        .map(|k| (strsim::jaro_winkler(got, k), k))
        .filter(|(s, _)| *s > 0.8)
        .max_by(|a, b| a.0.total_cmp(&b.0))
        .map(|(_, k)| format!(", did you mean `{k}`?"))
        .unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn axes_first_slowest_with_names() {
        let axes = vec![("a.x".to_string(), vec![toml::Value::Integer(1), toml::Value::Integer(2)]), ("b".to_string(), vec!["p".into(), "q".into(), "r".into()])];
        let ax = Axes(&axes);
        assert_eq!(ax.combos(), Some(6));
        let names: Vec<String> = (0..6).map(|i| Axes::label(&ax.combo(i)).join(", ")).collect();
        assert_eq!(names, ["x=1, b=p", "x=1, b=q", "x=1, b=r", "x=2, b=p", "x=2, b=q", "x=2, b=r"]);
        assert_eq!(Axes(&[]).combos(), Some(1));
    }

    #[test]
    fn values_hints_and_their_refusals() {
        assert_eq!(parse_value("k", " 1000 ").unwrap(), toml::Value::Integer(1000));
        assert_eq!(parse_value("k", "native").unwrap(), toml::Value::String("native".into()));
        assert_eq!(parse_value("k", "").unwrap_err(), ValueError::Empty("k".into()));
        assert!(matches!(parse_value("k", "a b"), Err(ValueError::NotAValue { .. })));
        assert_eq!(parse_value("k", &"9".repeat(300)).unwrap_err(), ValueError::TooLong("k".into()));
        assert_eq!(did_you_mean("hypervisr", ["platform", "hypervisor"]), ", did you mean `hypervisor`?");
        assert_eq!(did_you_mean("zzz", ["platform"]), "");
        assert_eq!(show(&toml::Value::String("x".into())), "x");
        assert_eq!(show(&toml::Value::Float(0.5)), "0.5");
    }
}
