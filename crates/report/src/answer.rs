//! The answer to a run's questions, computed from its configurations.
//!
//! A [`Question`] (a scenario's `[[question]]`, or `irqlab compare --by`) asks what changing
//! one parameter from a baseline to some variants does to a few statistics. The answer pairs
//! every baseline configuration with the variant configuration that differs from it **only** in
//! that parameter (every other parameter equal, a missing value counting as a value of its own),
//! so nothing is compared across an unrelated change. Pairs are grouped by the question's
//! `within` parameters; a varying parameter not in `within` is folded, and the group then gives
//! the median over its pairs with the range of the change, naming what it folded.
//!
//! Values are the configuration's row (its first seed), or the median over seeds when the run
//! has several — the same value the "vs published" checks judge. Uncertainty goes through one
//! function, [`uncertainty`], to be switched to the intervals and verdicts of issue 25 when they
//! land; until then it says it is not computed.
use std::collections::BTreeSet;

use results::{summary_stat, ConfigResult, Question, RunResult};

/// Why a question cannot be answered from a result.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum AnswerError {
    /// No configuration has the parameter under study.
    #[error("no configuration has parameter `{param}` (the parameters are: {known})")]
    UnknownParam { param: String, known: String },
    /// No configuration has the baseline or a variant value.
    #[error("no configuration has `{param}` = `{value}` (its values are: {taken})")]
    UnknownValue { param: String, value: String, taken: String },
}

/// How sure a change is: the verdict of `results::stats` (issue 25) for one pair of
/// configurations, or why there is none.
#[derive(Debug, Clone, PartialEq)]
pub enum Uncertainty {
    /// variant/baseline with its interval at `confidence`, and the one word.
    Verdict { word: &'static str, interval: Option<(f64, f64)>, confidence: f64 },
    /// Several pairs folded into one row: each pair's own verdict, counted (issue 28). The
    /// interval spans every pair's interval, so it covers each of them.
    Folded { faster: usize, slower: usize, none: usize, unjudged: usize, interval: Option<(f64, f64)>, confidence: f64 },
    /// No verdict, and why (a figure, a statistic without one).
    Unjudged(String),
}

/// The confidence the answers are judged at.
pub const ANSWER_CONFIDENCE: f64 = 0.95;

impl Uncertainty {
    pub fn text(&self) -> String {
        match self {
            Uncertainty::Verdict { word, interval: Some((lo, hi)), confidence } => {
                format!("{word} (ratio in [{lo:.3}, {hi:.3}] at {:.0} %)", confidence * 100.0)
            }
            Uncertainty::Verdict { word, interval: None, .. } => format!("{word} (no interval)"),
            Uncertainty::Folded { .. } => self.cell(),
            Uncertainty::Unjudged(why) => why.clone(),
        }
    }

    /// One row for `pairs` folded together, from each pair's own verdict.
    pub fn folded(per_pair: &[Uncertainty]) -> Uncertainty {
        use results::stats::verdict::Word;
        let (mut faster, mut slower, mut none, mut unjudged) = (0, 0, 0, 0);
        let mut interval: Option<(f64, f64)> = None;
        let mut confidence = ANSWER_CONFIDENCE;
        for u in per_pair {
            match u {
                Uncertainty::Verdict { word, interval: iv, confidence: c } => {
                    confidence = *c;
                    if *word == Word::Faster.as_str() {
                        faster += 1;
                    } else if *word == Word::Slower.as_str() {
                        slower += 1;
                    } else {
                        none += 1;
                    }
                    if let Some((lo, hi)) = iv {
                        interval = Some(interval.map_or((*lo, *hi), |(a, b)| (a.min(*lo), b.max(*hi))));
                    }
                }
                _ => unjudged += 1,
            }
        }
        if unjudged == per_pair.len() {
            return Uncertainty::Unjudged(format!("{} pairs folded: no interval", per_pair.len()));
        }
        Uncertainty::Folded { faster, slower, none, unjudged, interval, confidence }
    }

    /// For a table column headed with the confidence: `faster [0.379, 0.380]`, `no difference
    /// resolvable [0.85, 1.61]`, or why there is none.
    pub fn cell(&self) -> String {
        match self {
            Uncertainty::Verdict { word, interval: Some((lo, hi)), .. } => format!("{word} [{lo:.3}, {hi:.3}]"),
            Uncertainty::Verdict { word, interval: None, .. } => (*word).to_string(),
            Uncertainty::Folded { faster, slower, none, unjudged, interval, .. } => {
                let n = faster + slower + none + unjudged;
                let counts: Vec<String> = [(*faster, "faster"), (*slower, "slower"), (*none, "no difference"), (*unjudged, "no interval")]
                    .iter()
                    .filter(|(k, _)| *k > 0)
                    .map(|(k, w)| format!("{w} {k}"))
                    .collect();
                let one_word = counts.len() == 1;
                match (one_word, interval) {
                    (true, Some((lo, hi))) => format!("{} in {n}/{n} pairs [{lo:.3}, {hi:.3}]", counts[0].rsplit_once(' ').map_or("", |x| x.0)),
                    (true, None) => format!("{} in {n}/{n} pairs", counts[0].rsplit_once(' ').map_or("", |x| x.0)),
                    (false, _) => format!("{} of {n} pairs", counts.join(", ")),
                }
            }
            Uncertainty::Unjudged(why) => why.clone(),
        }
    }

    /// Whether the change is resolved (faster or slower) at the confidence used.
    pub fn resolved(&self) -> Option<bool> {
        match self {
            Uncertainty::Verdict { word, .. } => Some(*word != results::stats::verdict::Word::NoDifference.as_str()),
            // Resolved only when every folded pair is resolved the same way.
            Uncertainty::Folded { faster, slower, none, unjudged, .. } => Some(*none == 0 && *unjudged == 0 && (*faster == 0 || *slower == 0)),
            Uncertainty::Unjudged(_) => None,
        }
    }
}

/// The verdict on one statistic between two configurations (see the module doc); only latency
/// statistics of a class have one, from the class's histogram (and its repetitions, if any).
pub fn uncertainty(_r: &RunResult, base: &ConfigResult, variant: &ConfigResult, class: Option<&str>, stat: &str) -> Uncertainty {
    use results::stats::{
        pairs::class_data,
        verdict::{compare_stat, VERDICT_STATS},
        Confidence,
    };
    let Some(class) = class else { return Uncertainty::Unjudged("a figure: no interval".into()) };
    if !VERDICT_STATS.contains(&stat) {
        return Uncertainty::Unjudged(format!("{stat}: no interval"));
    }
    let (Ok(Some(a)), Ok(Some(b))) = (class_data(base, class), class_data(variant, class)) else {
        return Uncertainty::Unjudged(format!("class {class}: no distribution stored"));
    };
    let conf = Confidence::new(ANSWER_CONFIDENCE).expect("0.95 is a confidence");
    match compare_stat(&a, &b, stat, conf) {
        Ok(v) => Uncertainty::Verdict { word: v.word.as_str(), interval: v.interval, confidence: ANSWER_CONFIDENCE },
        Err(e) => Uncertainty::Unjudged(e.to_string()),
    }
}

/// What a statistic is measured in.
#[derive(Debug, Clone, PartialEq)]
pub enum Quantity {
    /// A latency in ns.
    Latency,
    /// A figure in its own unit.
    Figure(String),
}

/// One statistic, baseline → variant, within one group.
#[derive(Debug, Clone, PartialEq)]
pub struct Change {
    /// `mean`, `p99`, or the figure's name.
    pub stat: String,
    /// The latency class (None for a figure).
    pub class: Option<String>,
    pub quantity: Quantity,
    /// Baseline and variant values; when the group folds several pairs, those of the pair whose
    /// change is the median.
    pub base: f64,
    pub variant: f64,
    /// variant − base.
    pub abs: f64,
    /// abs / base; None when the baseline is 0.
    pub rel: Option<f64>,
    /// The smallest and largest change over the group's pairs, when it has several.
    pub abs_range: Option<(f64, f64)>,
    pub rel_range: Option<(f64, f64)>,
    /// Number of pairs with a value.
    pub pairs: usize,
    /// The change of every pair, and the relative change of those with a non-zero baseline.
    pub pair_abs: Vec<f64>,
    pub pair_rel: Vec<f64>,
    pub uncertainty: Uncertainty,
}

/// One group (values of the `within` parameters) and one variant.
#[derive(Debug, Clone, PartialEq)]
pub struct GroupAnswer {
    /// `key=value` for each group parameter.
    pub group: Vec<(String, String)>,
    pub variant: String,
    /// (baseline configuration, variant configuration) names.
    pub pairs: Vec<(String, String)>,
    pub changes: Vec<Change>,
}

impl GroupAnswer {
    /// "job=4k-qd1, scheduler=null", or "all" when nothing names groups.
    pub fn label(&self) -> String {
        if self.group.is_empty() {
            return "all".into();
        }
        self.group.iter().map(|(k, v)| format!("{}={v}", short(k))).collect::<Vec<_>>().join(", ")
    }
}

/// The answer to one question.
#[derive(Debug, Clone, PartialEq)]
pub struct Answer {
    pub question: Question,
    /// The parameters naming the groups.
    pub group_keys: Vec<String>,
    /// Varying parameters folded inside groups.
    pub folded: Vec<String>,
    pub groups: Vec<GroupAnswer>,
    /// Configurations with the baseline or a variant value that pair with nothing.
    pub unpaired: Vec<String>,
}

/// The last component of a dotted key: `hypervisor.vwfi` → `vwfi`.
pub fn short(key: &str) -> &str {
    key.rsplit('.').next().unwrap_or(key)
}

/// A statistic of a configuration: the median over seeds when there are several, else the row.
pub fn stat_value(c: &ConfigResult, class: Option<&str>, stat: &str) -> Option<f64> {
    let seeds = c.seed_spread.as_ref().filter(|s| s.seeds.len() > 1);
    let v = match (class, stat.strip_prefix("figure:")) {
        (_, Some(name)) => seeds.and_then(|s| s.figure(name)).map(|s| s.median).or_else(|| c.figures.get(name).map(|f| f.value)),
        (Some(class), None) => {
            let l = c.classes.get(class)?;
            seeds.and_then(|s| s.latency(class, stat)).map(|s| s.median).or_else(|| summary_stat(&l.summary, stat))
        }
        (None, None) => None,
    }?;
    v.is_finite().then_some(v)
}

/// Answer `q` from the configurations of `r` (failed ones are left out).
pub fn answer(r: &RunResult, q: &Question) -> Result<Answer, AnswerError> {
    let ok: Vec<&ConfigResult> = r.configs.iter().filter(|c| c.error.is_none()).collect();
    let keys: BTreeSet<&String> = ok.iter().flat_map(|c| c.params.keys()).collect();
    if !keys.contains(&q.param) {
        let known = keys.iter().map(|k| format!("`{k}`")).collect::<Vec<_>>().join(", ");
        return Err(AnswerError::UnknownParam { param: q.param.clone(), known });
    }
    let value = |c: &ConfigResult, k: &str| c.params.get(k).cloned();
    let taken: BTreeSet<String> = ok.iter().filter_map(|c| value(c, &q.param)).collect();
    for v in std::iter::once(&q.baseline).chain(&q.variants) {
        if !taken.contains(v) {
            let taken = taken.iter().map(|t| format!("`{t}`")).collect::<Vec<_>>().join(", ");
            return Err(AnswerError::UnknownValue { param: q.param.clone(), value: v.clone(), taken });
        }
    }
    // The other parameters that vary: a pair must agree on all of them.
    let others: Vec<String> =
        keys.iter().filter(|k| **k != &q.param).filter(|k| ok.iter().map(|c| value(c, k)).collect::<BTreeSet<_>>().len() > 1).map(|k| k.to_string()).collect();
    let group_keys: Vec<String> = if q.within.is_empty() { others.clone() } else { q.within.clone() };
    let folded: Vec<String> = others.iter().filter(|k| !group_keys.contains(k)).cloned().collect();
    let signature = |c: &ConfigResult| others.iter().map(|k| value(c, k)).collect::<Vec<_>>();
    let mut groups: Vec<(GroupAnswer, Vec<(&ConfigResult, &ConfigResult)>)> = Vec::new();
    let mut used = vec![false; ok.len()];
    for (bi, b) in ok.iter().enumerate() {
        if value(b, &q.param).as_deref() != Some(q.baseline.as_str()) {
            continue;
        }
        let sig = signature(b);
        for var in &q.variants {
            let Some(vi) = ok.iter().position(|c| value(c, &q.param).as_deref() == Some(var.as_str()) && signature(c) == sig) else { continue };
            used[bi] = true;
            used[vi] = true;
            let group: Vec<(String, String)> = group_keys.iter().map(|k| (k.clone(), value(b, k).unwrap_or_else(|| "—".into()))).collect();
            let pos = groups.iter().position(|(g, _)| g.group == group && &g.variant == var);
            let gi = pos.unwrap_or_else(|| {
                groups.push((GroupAnswer { group, variant: var.clone(), pairs: Vec::new(), changes: Vec::new() }, Vec::new()));
                groups.len() - 1
            });
            groups[gi].0.pairs.push((b.name.clone(), ok[vi].name.clone()));
            groups[gi].1.push((b, ok[vi]));
        }
    }
    let unpaired =
        ok.iter().enumerate().filter(|(i, c)| !used[*i] && value(c, &q.param).is_some_and(|v| v == q.baseline || q.variants.contains(&v))).map(|(_, c)| c.name.clone()).collect();
    // Variants in the question's order, groups in the order configurations came.
    groups.sort_by_key(|(g, _)| q.variants.iter().position(|v| v == &g.variant));
    let groups = groups
        .into_iter()
        .map(|(mut g, pairs)| {
            g.changes = changes(r, q, &pairs);
            g
        })
        .collect();
    Ok(Answer { question: q.clone(), group_keys, folded, groups, unpaired })
}

/// Every pair's configurations have one latency class each, under different names
/// (`device_irqfd`, `device_msi`: a class per path): compare the one class of each, labelled
/// with the names' common prefix. `None` when the classes are to be matched by name.
fn single_class_label(pairs: &[(&ConfigResult, &ConfigResult)]) -> Option<String> {
    let names: BTreeSet<&String> = pairs.iter().flat_map(|(b, v)| b.classes.keys().chain(v.classes.keys())).collect();
    let single = pairs.iter().all(|(b, v)| b.classes.len() == 1 && v.classes.len() == 1);
    if !single || names.len() < 2 {
        return None;
    }
    let first: Vec<char> = names.iter().next()?.chars().collect();
    let n = names.iter().map(|s| s.chars().zip(&first).take_while(|(a, b)| a == *b).count()).min().unwrap_or(0);
    let prefix: String = first[..n].iter().collect::<String>().trim_end_matches(['_', '-', '.']).to_string();
    Some(if prefix.is_empty() { "latency".into() } else { prefix })
}

/// The class of `c` a row about `class` reads: the class itself, or with a single-class label,
/// the configuration's only class.
fn class_of<'a>(c: &'a ConfigResult, class: &'a str, single: bool) -> &'a str {
    if single {
        c.classes.keys().next().map(String::as_str).unwrap_or(class)
    } else {
        class
    }
}

/// The (class, stat) rows of a group: each figure once, each latency stat per class.
fn rows(q: &Question, pairs: &[(&ConfigResult, &ConfigResult)], single: Option<&str>) -> Vec<(Option<String>, String)> {
    let classes: Vec<String> = if let Some(label) = single {
        vec![label.to_string()]
    } else if q.classes.is_empty() {
        pairs.iter().flat_map(|(b, _)| b.classes.keys().cloned()).collect::<BTreeSet<_>>().into_iter().collect()
    } else {
        q.classes.clone()
    };
    let mut out = Vec::new();
    for class in &classes {
        for s in q.stats.iter().filter(|s| !s.starts_with("figure:")) {
            out.push((Some(class.clone()), s.clone()));
        }
    }
    out.extend(q.stats.iter().filter(|s| s.starts_with("figure:")).map(|s| (None, s.clone())));
    out
}

/// Index of the median of `v` (the lower one of an even count).
fn median_index(v: &[f64]) -> usize {
    let mut idx: Vec<usize> = (0..v.len()).collect();
    idx.sort_by(|a, b| v[*a].total_cmp(&v[*b]));
    idx[(v.len() - 1) / 2]
}

fn changes(r: &RunResult, q: &Question, pairs: &[(&ConfigResult, &ConfigResult)]) -> Vec<Change> {
    let single = single_class_label(pairs);
    let mut out = Vec::new();
    for (class, stat) in rows(q, pairs, single.as_deref()) {
        let read = |c: &ConfigResult| stat_value(c, class.as_deref().map(|k| class_of(c, k, single.is_some())), &stat);
        let vals: Vec<(f64, f64)> = pairs.iter().filter_map(|(b, v)| Some((read(b)?, read(v)?))).collect();
        if vals.is_empty() {
            continue;
        }
        let abs: Vec<f64> = vals.iter().map(|(b, v)| v - b).collect();
        let rel: Vec<Option<f64>> = vals.iter().map(|(b, v)| (*b != 0.0).then(|| (v - b) / b)).collect();
        let range = |v: &[f64]| (v.len() > 1).then(|| (v.iter().copied().fold(f64::INFINITY, f64::min), v.iter().copied().fold(f64::NEG_INFINITY, f64::max)));
        let rels: Vec<f64> = rel.iter().flatten().copied().collect();
        let (abs_range, rel_range) = (range(&abs), range(&rels));
        let quantity = match stat.strip_prefix("figure:") {
            Some(name) => Quantity::Figure(pairs.iter().find_map(|(b, _)| b.figures.get(name).map(|f| f.unit.clone())).unwrap_or_default()),
            None => Quantity::Latency,
        };
        // The pair whose change is the median stands for the group: its baseline, variant,
        // change and relative change are shown together, so they agree with each other.
        let m = median_index(&abs);
        out.push(Change {
            stat: stat.strip_prefix("figure:").unwrap_or(&stat).to_string(),
            class: class.clone(),
            quantity,
            base: vals[m].0,
            variant: vals[m].1,
            abs: abs[m],
            rel: rel[m],
            abs_range,
            rel_range,
            pairs: vals.len(),
            pair_abs: abs,
            pair_rel: rels,
            // One pair: its verdict. Several folded pairs: each pair's verdict, counted; the
            // row is resolved only if they all agree (a verdict of one would not speak for all).
            uncertainty: if pairs.len() == 1 {
                uncertainty(r, pairs[0].0, pairs[0].1, class.as_deref(), &stat)
            } else {
                Uncertainty::folded(&pairs.iter().map(|(b, v)| uncertainty(r, b, v, class.as_deref(), &stat)).collect::<Vec<_>>())
            },
        });
    }
    out
}
