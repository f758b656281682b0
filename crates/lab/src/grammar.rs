//! One grammar for what follows `--` in every mode (issue 34 item 3): the bench name first, then
//! its flags — `kvm … -- timer --samples 64 --out D` and `xen … -- timer --samples 64 --out D`.
//!
//! The KVM mode used to take irqlab's own command line (`-- run timer …`), and still passes
//! other irqlab subcommands through (`-- sim demo-timer-inject …`): a bench name first becomes
//! `run <bench>` for the irqlab inside. `-- run <bench> …` stays accepted in both modes as an
//! alias, with a note naming the new form, so existing scripts keep working and say so.

/// Several benches in one command: the words after the first `--` split at every further `--`,
/// one bench (with its own `--out`) per part — `-- timer … --out A -- ipi … --out B`. The KVM
/// mode runs them all in one boot (a boot costs far more than a bench); the Xen mode boots one
/// domU image per bench and takes one bench per command.
pub fn segments(words: &[String]) -> Vec<Vec<String>> {
    words.split(|w| w == "--").map(<[String]>::to_vec).collect()
}

/// The benches the lab runs, by the name that comes first after `--`.
pub const BENCHES: [&str; 4] = ["timer", "ipi", "device", "fio"];

/// The note printed for the old `-- run <bench>` form.
pub fn alias_note(words: &[String]) -> Option<String> {
    let (first, second) = (words.first()?, words.get(1)?);
    (first == "run" && BENCHES.contains(&second.as_str()))
        .then(|| format!("`-- run {second} …` is the older form, accepted as an alias; the one grammar in every mode is `-- {second} …`"))
}

/// The words for the Xen mode's bench parser: `run` of the alias dropped.
pub fn xen_words(words: &[String]) -> Vec<String> {
    if alias_note(words).is_some() {
        words[1..].to_vec()
    } else {
        words.to_vec()
    }
}

/// The irqlab command line the KVM mode runs inside: a bench name first gets `run` in front;
/// `run <bench>` (the alias) and other irqlab subcommands are passed as they are.
pub fn kvm_words(words: &[String]) -> Vec<String> {
    match words.first() {
        Some(w) if BENCHES.contains(&w.as_str()) => std::iter::once("run".to_string()).chain(words.iter().cloned()).collect(),
        _ => words.to_vec(),
    }
}

/// The bench a command line runs (`timer`, …), in either form; `None` for other irqlab commands.
pub fn bench_of(words: &[String]) -> Option<&str> {
    let w = xen_words(words);
    let first = w.first()?;
    BENCHES.iter().find(|b| **b == first.as_str()).copied()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn v(s: &str) -> Vec<String> {
        s.split_whitespace().map(String::from).collect()
    }

    #[test]
    fn bench_first_means_the_same_in_both_modes() {
        assert_eq!(kvm_words(&v("timer --samples 8 --out o")), v("run timer --samples 8 --out o"));
        assert_eq!(xen_words(&v("timer --samples 8 --out o")), v("timer --samples 8 --out o"));
        assert_eq!(alias_note(&v("timer --out o")), None);
        assert_eq!(bench_of(&v("ipi --out o")), Some("ipi"));
    }

    #[test]
    fn run_bench_is_an_alias_with_a_note() {
        assert_eq!(kvm_words(&v("run timer --out o")), v("run timer --out o"));
        assert_eq!(xen_words(&v("run timer --out o")), v("timer --out o"));
        assert!(alias_note(&v("run ipi --out o")).unwrap().contains("`-- ipi …`"));
        assert_eq!(bench_of(&v("run device --via msi --out o")), Some("device"));
    }

    #[test]
    fn several_benches_split_at_each_double_dash() {
        assert_eq!(segments(&v("timer --out a -- ipi --out b")), vec![v("timer --out a"), v("ipi --out b")]);
        assert_eq!(segments(&v("timer --out a")), vec![v("timer --out a")]);
        assert_eq!(segments(&v("timer --out a --")), vec![v("timer --out a"), vec![]], "an empty part is kept, to be refused by its mode");
    }

    #[test]
    fn other_irqlab_commands_pass_through_in_kvm() {
        assert_eq!(kvm_words(&v("sim demo-timer-inject --out o")), v("sim demo-timer-inject --out o"));
        assert_eq!(alias_note(&v("run")), None);
        assert_eq!(bench_of(&v("sim demo --out o")), None);
    }
}
