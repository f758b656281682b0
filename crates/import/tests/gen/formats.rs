//! The generators of `gen`, one function per format: each writes the file as the tool writes
//! it, from the samples the bytes choose, and says what its import must give.
use import::{ImportOptions, LatencyUnit};

use super::{Expect, Generated, Src};

pub(super) fn opts() -> ImportOptions {
    ImportOptions { tsc_ghz: Some(2.0), board: Some("gen-board".into()), ..Default::default() }
}

/// Samples as sorted (value, count) buckets with values in 0..=vmax, total count in 1..=nmax.
pub(super) fn buckets(s: &mut Src, vmax: u64, nmax: u64) -> Vec<(u64, u64)> {
    let k = s.range(1, 8);
    let mut b: std::collections::BTreeMap<u64, u64> = Default::default();
    for _ in 0..k {
        *b.entry(s.below(vmax + 1)).or_insert(0) += s.range(1, nmax);
    }
    b.into_iter().collect()
}

pub(super) fn stats(b: &[(u64, u64)]) -> (u64, u64, u64, f64) {
    let n: u64 = b.iter().map(|x| x.1).sum();
    let sum: u128 = b.iter().map(|x| x.0 as u128 * x.1 as u128).sum();
    (n, b[0].0, b[b.len() - 1].0, sum as f64 / n as f64)
}

pub(super) fn fio(s: &mut Src) -> Generated {
    let jobs = s.range(1, 3) as usize;
    let names: Vec<&str> = (0..jobs).map(|_| ["randread", "seq", "randread"][s.below(3) as usize]).collect();
    let plus = s.below(2) == 0;
    let mutation = s.below(6);
    let mut expect = Vec::new();
    let mut js = Vec::new();
    for (j, name) in names.iter().enumerate() {
        let b = buckets(s, 2_000_000, 1000);
        let (n, min, max, mut mean) = stats(&b);
        let config = if names.iter().filter(|x| *x == name).count() > 1 { format!("{name}.job{}", names[..j].iter().filter(|x| *x == name).count()) } else { name.to_string() };
        expect.push((format!("{config}/io"), n, min, max));
        let mut count = n;
        if j == 0 && mutation == 1 {
            mean = max as f64 * 2.0 + 100.0;
        }
        if j == 0 && mutation == 2 && plus {
            count += 1;
        }
        let hist = if plus {
            format!("\"bins\": {{{}}}", b.iter().map(|(v, c)| format!("\"{v}\": {c}")).collect::<Vec<_>>().join(", "))
        } else {
            // fio's printed percentiles: the value at each rank
            let at = |p: f64| {
                let rank = ((p / 100.0) * n as f64).ceil().max(1.0) as u64;
                let mut cum = 0;
                b.iter()
                    .find(|x| {
                        cum += x.1;
                        cum >= rank
                    })
                    .map_or(max, |x| x.0)
            };
            format!("\"percentile\": {{{}}}", [1.0, 50.0, 90.0, 99.0, 99.9].iter().map(|p| format!("\"{p:.6}\": {}", at(*p))).collect::<Vec<_>>().join(", "))
        };
        js.push(format!(
            "{{\"jobname\": \"{name}\", \"groupid\": 0, \"job options\": {{\"rw\": \"randread\"}}, \"read\": {{\"iops\": 1000.5, \"bw_bytes\": 4096000, \"clat_ns\": {{\"min\": {min}, \"max\": {max}, \"mean\": {mean}, \"N\": {count}, {hist}}}}}, \"write\": {{\"clat_ns\": {{\"N\": 0}}}}}}"
        ));
    }
    let dup = if mutation == 3 { "\"fio version\": \"fio-3.33\", " } else { "" };
    let mut text = format!("{{\"fio version\": \"fio-3.33\", {dup}\"hostname\": \"gen\", \"jobs\": [\n{}\n]}}\n", js.join(",\n"));
    if mutation == 4 {
        text.push_str("{\"fio version\": \"fio-3.33\", \"jobs\": []}\n");
    }
    let expect = match mutation {
        1 => Expect::Refused("within min and max"),
        2 if plus => Expect::Refused("summing to N"),
        3 => Expect::Refused("given twice"),
        4 => Expect::Refused("one complete fio JSON"),
        _ => Expect::Ok(expect),
    };
    Generated { name: "gen-fio.json".into(), text, opts: opts(), expect }
}

pub(super) fn class_name(one: bool, t: usize) -> String {
    if one {
        "timer".into()
    } else {
        format!("timer.t{t}")
    }
}

pub(super) fn cyclictest_json(s: &mut Src) -> Generated {
    let threads = s.range(1, 3) as usize;
    let h = s.range(1, 300);
    let ns = s.below(2) == 1;
    let scale = if ns { 1 } else { 1000 };
    let mutation = s.below(7);
    let (mut expect, mut ts) = (Vec::new(), Vec::new());
    for t in 0..threads {
        let b = buckets(s, 400, 500);
        let (n, min, max, mut avg) = stats(&b);
        let in_hist: Vec<&(u64, u64)> = b.iter().filter(|x| x.0 < h).collect();
        if in_hist.is_empty() {
            // no percentile: the class is summary figures only
        } else {
            expect.push((format!("cyclictest/{}", class_name(threads == 1, t)), n, min * scale, max * scale));
        }
        let mut hist: Vec<String> = in_hist.iter().map(|(v, c)| format!("\"{v}\": {c}")).collect();
        if t == 0 && mutation == 1 {
            avg = (max + 5) as f64;
        }
        // a bucket holding a sample above the stated max
        let beyond = t == 0 && mutation == 2;
        if beyond {
            hist.push(format!("\"{}\": 1", max + 3));
        }
        let cycles = n + u64::from(beyond);
        ts.push(format!("\"{t}\": {{\"histogram\": {{{}}}, \"cycles\": {cycles}, \"min\": {min}, \"max\": {max}, \"avg\": {avg}, \"cpu\": {t}, \"node\": 0}}", hist.join(", ")));
    }
    let dup = if mutation == 3 { "\"num_threads\": 1, " } else { "" };
    let mut text = format!(
        "{{\n\"file_version\": 1,\n\"cmdline:\": \"cyclictest -l 1000 -h {h} -q --json=x.json\",\n\"rt_test_version:\": \"2.40\",\n{dup}\"num_threads\": {threads},\n\"resolution_in_ns\": {},\n\"thread\": {{\n{}\n}}\n}}\n",
        u8::from(ns),
        ts.join(",\n")
    );
    if mutation == 4 {
        text.push_str("{\"thread\": {}}\n");
    }
    let mut o = opts();
    if mutation == 5 {
        o.unit = Some(if ns { LatencyUnit::Us } else { LatencyUnit::Ns });
    }
    let expect = match mutation {
        1 => Expect::Refused("within min and max"),
        2 => Expect::Refused("within the stated max"),
        3 => Expect::Refused("given twice"),
        4 => Expect::Refused("one complete cyclictest JSON document"),
        5 => Expect::Refused("contradicts"),
        _ => Expect::Ok(expect),
    };
    Generated { name: "gen-cyclictest.json".into(), text, opts: o, expect }
}

#[allow(clippy::needless_range_loop)]
pub(super) fn cyclictest_text(s: &mut Src) -> Generated {
    let threads = s.range(1, 3) as usize;
    let h = s.range(1, 120);
    let ns = s.below(2) == 1;
    let scale = if ns { 1 } else { 1000 };
    let mutation = s.below(5);
    let mut counts = vec![vec![0u64; threads]; h as usize];
    let (mut expect, mut tail) = (Vec::new(), vec![Vec::new(); 5]);
    for t in 0..threads {
        let b = buckets(s, 200, 500);
        let (n, min, max, avg) = stats(&b);
        let over: u64 = b.iter().filter(|x| x.0 >= h).map(|x| x.1).sum();
        for &(v, c) in b.iter().filter(|x| x.0 < h) {
            counts[v as usize][t] += c;
        }
        if over < n {
            expect.push((format!("cyclictest/{}", class_name(threads == 1, t)), n, min * scale, max * scale));
        }
        let avg = if t == 0 && mutation == 1 { max + 5 } else { avg as u64 };
        for (k, v) in [n - over, min, avg, max, over].into_iter().enumerate() {
            tail[k].push(format!("{v:05}"));
        }
    }
    let mut text = String::from("# /dev/cpu_dma_latency set to 0us\n# Histogram\n");
    for (i, row) in counts.iter().enumerate() {
        text += &format!("{i:06} {}\n", row.iter().map(|c| format!("{c:06}")).collect::<Vec<_>>().join("\t"));
    }
    for (k, label) in ["# Total:", "# Min Latencies:", "# Avg Latencies:", "# Max Latencies:", "# Histogram Overflows:"].iter().enumerate() {
        text += &format!("{label} {}\n", tail[k].join(" "));
        if k == 3 && mutation == 2 {
            text += &format!("{label} {}\n", tail[k].join(" "));
        }
    }
    let mut o = opts();
    o.unit = (mutation != 3).then_some(if ns { LatencyUnit::Ns } else { LatencyUnit::Us });
    let expect = match mutation {
        1 => Expect::Refused("within min and max"),
        2 => Expect::Refused("a second one"),
        3 => Expect::Refused("--unit"),
        _ => Expect::Ok(expect),
    };
    Generated { name: "gen-cyclictest.txt".into(), text, opts: o, expect }
}

pub(super) fn rtla(s: &mut Src) -> Generated {
    let cpus = s.range(1, 2) as usize;
    let entries = s.range(1, 60);
    let ns = s.below(2) == 1;
    let scale = if ns { 1 } else { 1000 };
    let mutation = s.below(6);
    let cols: Vec<String> = (0..cpus).flat_map(|c| [format!("IRQ-{c:03}"), format!("Thr-{c:03}")]).collect();
    let mut rows = vec![vec![0u64; cols.len()]; entries as usize];
    let (mut expect, mut feet) = (Vec::new(), vec![Vec::new(); 5]);
    for (k, col) in cols.iter().enumerate() {
        let b = buckets(s, 100, 300);
        let (n, min, max, avg) = stats(&b);
        let over: u64 = b.iter().filter(|x| x.0 >= entries).map(|x| x.1).sum();
        for &(v, c) in b.iter().filter(|x| x.0 < entries) {
            rows[v as usize][k] += c;
        }
        let (kind, cpu) = col.split_once('-').unwrap();
        let class = format!("{}.cpu{}", if kind == "IRQ" { "irq" } else { "thread" }, cpu.parse::<u32>().unwrap());
        if over < n {
            expect.push((format!("timerlat/{class}"), n, min * scale, max * scale));
        }
        let (mut min_p, mut avg_p, mut count) = (min, avg as u64, n);
        if k == 0 {
            match mutation {
                1 => avg_p = max + entries + 2,
                2 if min < max => min_p = max + 1,
                2 => count += 1,
                _ => {}
            }
        }
        for (i, v) in [over, count, min_p, avg_p, max].into_iter().enumerate() {
            feet[i].push(v.to_string());
        }
    }
    let mut header = cols.clone();
    if mutation == 3 && cols.len() > 1 {
        header[1] = header[0].clone();
    }
    let unit = if ns { "nanoseconds (ns)" } else { "microseconds (us)" };
    let mut text = format!("# RTLA timerlat histogram\n# Time unit is {unit}\n# Duration:   0 00:00:10\nIndex   {}\n", header.join("   "));
    for (i, r) in rows.iter().enumerate() {
        if r.iter().any(|c| *c > 0) {
            text += &format!("{i:<7} {}\n", r.iter().map(|c| format!("{c:>8}")).collect::<Vec<_>>().join(" "));
        }
    }
    for (i, f) in ["over:", "count:", "min:", "avg:", "max:"].iter().enumerate() {
        text += &format!("{f:<7} {}\n", feet[i].join(" "));
    }
    let expect = match mutation {
        1 => Expect::Refused("within min and max"),
        2 if feet[2][0].parse::<u64>().unwrap() > feet[4][0].parse::<u64>().unwrap() => Expect::Refused("min ≤ max"),
        2 => Expect::Refused("truncated"),
        3 if cols.len() > 1 => Expect::Refused("twice"),
        _ => Expect::Ok(expect),
    };
    Generated { name: "gen-rtla.txt".into(), text, opts: opts(), expect }
}

pub(super) fn tscdeadline(s: &mut Src) -> Generated {
    let n = s.range(1, 40);
    let v: Vec<i64> = (0..n).map(|_| s.below(20_000) as i64 - 2_000).collect();
    let mut text = String::from("enabling apic\n");
    for x in &v {
        text += &format!("latency: {x}\n");
    }
    let mutation = s.below(4);
    if mutation == 1 {
        text += "latency: 12x\n";
    }
    if mutation == 2 {
        text += "latency: 9223372036854775807\n";
    }
    // 2 GHz: cycles / 2, rounded half away from zero; negatives count as 0 in `timer`
    let ns = |c: i64| ((c as f64 / 2.0).round() as i64).max(0) as u64;
    let expect = if mutation == 1 {
        Expect::Refused("TSC cycles")
    } else if mutation == 2 {
        Expect::Refused("within 13 days")
    } else {
        Expect::Ok(vec![("tscdeadline_latency/timer".into(), n, v.iter().map(|c| ns(*c)).min().unwrap(), v.iter().map(|c| ns(*c)).max().unwrap())])
    };
    Generated { name: "gen-tsc.txt".into(), text, opts: opts(), expect }
}

pub(super) fn ipi(s: &mut Src) -> Generated {
    let mutation = s.below(5);
    let mut text = String::from("[    3.1] ipi_benchmark: loading\n");
    for (i, row) in ["Dry-run", "Self-IPI", "Normal IPI", "Broadcast IPI", "Broadcast lock"].iter().enumerate() {
        let (d, t) = (s.below(1 << 20), s.below(1 << 24));
        let t = if i == 2 && mutation == 1 {
            "inf".to_string()
        } else if i == 2 && mutation == 2 {
            "-5".into()
        } else {
            t.to_string()
        };
        text += &format!("[  15{i}.3] {row}:   {d},   {t} ns\n");
        if i == 3 && mutation == 3 {
            text += &format!("[  15{i}.4] {row}:   {d},   {t} ns\n");
        }
    }
    let expect = match mutation {
        1 | 2 => Expect::Refused("finite"),
        3 => Expect::Refused("a second one"),
        _ => Expect::Ok(vec![]),
    };
    Generated { name: "gen-ipi.log".into(), text, opts: opts(), expect }
}

pub(super) fn tbm(s: &mut Src) -> Generated {
    let mutation = s.below(6);
    let mut text = String::from("tbm: timer every 500 ms\n");
    for _ in 0..s.range(1, 3) {
        let min = s.below(10_000);
        let max = min + s.below(10_000);
        let (warm, avg) = (min + s.below(max - min + 1), min + s.below(max - min + 1));
        let line = match mutation {
            1 => format!("max=NaN warm_max={warm} min={min} avg={avg}"),
            2 => format!("max={max} warm_max={warm} min={min} avg={avg} min={min}"),
            3 => format!("max={min} warm_max={warm} min={} avg={avg}", max + 1),
            4 => format!("max=1e400 warm_max={warm} min={min} avg={avg}"),
            _ => format!("max={max} warm_max={warm} min={min} avg={avg}"),
        };
        text += &format!("latency (ns): {line}\n");
    }
    let expect = match mutation {
        1 | 4 => Expect::Refused("finite"),
        2 => Expect::Refused("twice"),
        3 => Expect::Refused("min ≤ warm_max ≤ max"),
        _ => Expect::Ok(vec![]),
    };
    Generated { name: "gen-tbm.txt".into(), text, opts: opts(), expect }
}

/// A `@irqlab v1` record with its checksum.
pub fn rec(body: &str) -> String {
    let text = format!("@irqlab v1 {body}");
    let sum = text.bytes().fold(0u8, |a, b| a ^ b);
    format!("{text} *{sum:02x}\n")
}

pub(super) fn console(s: &mut Src) -> Generated {
    let n = s.range(1, 50);
    let mut ticks: Vec<u64> = (0..n).map(|_| s.range(1, 1 << 20)).collect();
    let mutation = s.below(5);
    let mut warmup = s.below(n);
    if mutation == 1 {
        warmup = n;
    }
    if mutation == 2 {
        ticks[(n / 2) as usize] = 1 << 63;
    }
    let mut text = String::from("Xen version 4.17.7 (gen)\n");
    text += &rec(&format!("0 start bench=timer wait=wfi period=62500 samples={n} warmup={warmup} freq=62500000 report=console abi=1"));
    for (i, t) in ticks.iter().enumerate() {
        text += &rec(&format!("{} t {i} {t}", i + 1));
    }
    let (min, max) = (*ticks.iter().min().unwrap(), *ticks.iter().max().unwrap());
    let avg = (ticks.iter().map(|&x| x as u128).sum::<u128>() / n as u128) as u64;
    let wm = ticks.iter().skip(warmup as usize).max().copied().unwrap_or(0);
    text += &rec(&format!("{} sum timer n={n} avg={avg} min={min} max={max} warm_max={wm}", n + 1));
    text += &rec(&format!("{} end samples={n} lost=0 spurious=0", n + 2));
    if mutation == 3 {
        text = text.replacen(" t 0 ", " t 0 1", 1);
    }
    let expect = match mutation {
        1 => Expect::Refused("warmup="),
        2 => Expect::Refused("below 2^50 ns"),
        3 => Expect::Refused("checksum"),
        _ => Expect::Ok(vec![]),
    };
    Generated { name: "gen-console.log".into(), text, opts: opts(), expect }
}
