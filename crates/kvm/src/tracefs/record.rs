//! A recorded run: what the splitter needs to redo a breakdown offline — the benchmark, the
//! run's threads and APIC target, each sample's start/arrival stamps, and the raw `trace` text —
//! in one text file (`trace-<config>.txt` next to result.json; test data under `tests/data/`).
//!
//! Format: `# irqlab-trace 1` then `# key=value …` header lines, `# stamp <start> <arrival>`
//! lines in sample order, a `# --- trace ---` line, then the trace text as tracefs wrote it.
use super::path::{Roles, TraceArch};
use super::split::Stamps;
use super::TraceError;
use crate::config::{Bench, BenchConfig, Via, Wait};

const MAGIC: &str = "# irqlab-trace 1";
const SEPARATOR: &str = "# --- trace ---";

#[derive(Debug, Clone, PartialEq)]
pub struct Recording {
    /// Whose KVM wrote the trace (header `arch=`, x86_64 when absent: recordings before arm64).
    pub arch: TraceArch,
    pub kind: Bench,
    pub wait: Wait,
    pub via: Via,
    pub tsc_khz: u64,
    pub roles: Roles,
    pub stamps: Vec<Stamps>,
    pub trace: String,
}

fn kind_from(s: &str) -> Option<Bench> {
    [Bench::Timer, Bench::Ipi, Bench::Device].into_iter().find(|k| k.name() == s)
}

fn via_from(s: &str) -> Option<Via> {
    Via::from_name(s)
}

impl Recording {
    /// The benchmark configuration the recording's path is derived from.
    pub fn config(&self) -> BenchConfig {
        BenchConfig { kind: self.kind, wait: self.wait, via: self.via, vcpus: if self.kind == Bench::Ipi { 2 } else { 1 }, ..Default::default() }
    }

    pub fn to_text(&self) -> String {
        let r = &self.roles;
        let tids = r.all_tids.iter().map(|t| t.to_string()).collect::<Vec<_>>().join(",");
        let mut s = format!(
            "{MAGIC}\n# arch={} bench={} wait={} via={} tsc_khz={}\n# target_tid={} source_tid={} target_apic={} vector={} all_tids={tids}\n",
            self.arch.name(),
            self.kind.name(),
            if self.wait == Wait::Busy { "busy" } else { "hlt" },
            self.via.name(),
            self.tsc_khz,
            r.target_tid,
            r.source_tid,
            r.target_apic,
            r.vector,
        );
        for st in &self.stamps {
            s.push_str(&format!("# stamp {} {}\n", st.start, st.arrival));
        }
        s.push_str(SEPARATOR);
        s.push('\n');
        s.push_str(&self.trace);
        s
    }

    /// Parse a recording; `file` names it in errors.
    pub fn parse(text: &str, file: &str) -> Result<Recording, TraceError> {
        let bad = |line: usize, what: &str| TraceError::Recording { file: file.to_string(), line, what: what.to_string() };
        if !text.starts_with(MAGIC) {
            return Err(bad(1, "expected the first line `# irqlab-trace 1`"));
        }
        let mut kv = std::collections::BTreeMap::new();
        let mut stamps = Vec::new();
        let mut trace_start = text.len();
        let mut offset = 0;
        for (i, line) in text.lines().enumerate() {
            let l = line.trim();
            offset += line.len() + 1;
            if l == SEPARATOR {
                trace_start = offset;
                break;
            }
            if let Some(rest) = l.strip_prefix("# stamp ") {
                let v: Vec<u64> = rest.split_whitespace().filter_map(|x| x.parse().ok()).collect();
                match v[..] {
                    [start, arrival] => stamps.push(Stamps { start, arrival }),
                    _ => return Err(bad(i + 1, "expected `# stamp <start tsc> <arrival tsc>`")),
                }
            } else if i > 0 && l.contains('=') {
                for w in l.trim_start_matches('#').split_whitespace() {
                    if let Some((k, v)) = w.split_once('=') {
                        kv.insert(k.to_string(), (i + 1, v.to_string()));
                    }
                }
            }
        }
        let get = |k: &str| kv.get(k).map(|(_, v)| v.as_str()).ok_or_else(|| bad(2, &format!("header key `{k}` missing")));
        let num = |k: &str| get(k).and_then(|v| v.parse::<i64>().map_err(|_| bad(kv[k].0, &format!("`{k}`: expected an integer, got `{v}`"))));
        let kind = kind_from(get("bench")?).ok_or_else(|| bad(kv["bench"].0, "`bench`: expected timer, ipi or device"))?;
        let via = via_from(get("via")?).ok_or_else(|| bad(kv["via"].0, "`via`: expected irqfd, msi, line or level"))?;
        let all_tids =
            get("all_tids")?.split(',').map(|t| t.parse().map_err(|_| bad(kv["all_tids"].0, "`all_tids`: expected comma-separated integers"))).collect::<Result<_, _>>()?;
        let arch = match kv.get("arch") {
            None => TraceArch::X86_64,
            Some((line, v)) => TraceArch::from_name(v).ok_or_else(|| bad(*line, "`arch`: expected x86_64 or aarch64"))?,
        };
        Ok(Recording {
            arch,
            kind,
            wait: if get("wait")? == "busy" { Wait::Busy } else { Wait::Hlt },
            via,
            tsc_khz: num("tsc_khz")? as u64,
            roles: Roles {
                target_tid: num("target_tid")? as i32,
                source_tid: num("source_tid")? as i32,
                target_apic: num("target_apic")? as u32,
                vector: u32::try_from(num("vector")?).map_err(|_| bad(kv["vector"].0, "`vector`: out of range"))?,
                all_tids,
            },
            stamps,
            trace: text[trace_start.min(text.len())..].to_string(),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_trips_and_names_bad_lines() {
        let r = Recording {
            arch: TraceArch::Aarch64,
            kind: Bench::Device,
            wait: Wait::Hlt,
            via: Via::Msi,
            tsc_khz: 1_996_248,
            roles: Roles { target_tid: 5, source_tid: 4, target_apic: 0, vector: 208, all_tids: vec![4, 5] },
            stamps: vec![Stamps { start: 10, arrival: 20 }],
            trace: "# tracer: nop\n x-4 [000] ..... 12: kvm_msi_set_irq: dst 0 vec 208 (Fixed|physical|edge)\n".into(),
        };
        assert_eq!(Recording::parse(&r.to_text(), "t.txt").unwrap(), r);
        let before_arm64 = r.to_text().replacen("# arch=aarch64 ", "# ", 1);
        assert_eq!(Recording::parse(&before_arm64, "t.txt").unwrap().arch, TraceArch::X86_64, "no `arch=`: an x86 recording");
        let e = Recording::parse("# irqlab-trace 1\n# bench=disk wait=hlt via=irqfd tsc_khz=1\n", "t.txt").unwrap_err().to_string();
        assert!(e.contains("t.txt") && e.contains("line 2") && e.contains("`bench`"), "{e}");
        let e = Recording::parse("hello", "t.txt").unwrap_err().to_string();
        assert!(e.contains("line 1"), "{e}");
    }
}
