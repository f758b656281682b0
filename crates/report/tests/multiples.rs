//! Small multiples that compare the same class share their axes, and the studied parameter
//! names the series (so its baseline and variant share a panel).
use results::{ConfigResult, LatencyRecorder, Question, ResultKind, RunMeta, RunResult};

fn sweep() -> RunResult {
    let mut r = RunResult::new(RunMeta::named("t", "s", 1, ResultKind::Predicted));
    for (i, level) in ["l1", "l2"].iter().enumerate() {
        for (j, bench) in ["a", "b", "c", "d", "e"].iter().enumerate() {
            for (k, tv) in ["off", "on"].iter().enumerate() {
                let mut c = ConfigResult::new(format!("level={level}, bench={bench}, timer_virt={tv}"));
                c.params.insert("vm.level".into(), level.to_string());
                c.params.insert("workload.bench".into(), bench.to_string());
                c.params.insert("hypervisor.timer_virt".into(), tv.to_string());
                let mut rec = LatencyRecorder::new(0);
                let base = 1000 * (1 + i as u64 * 10 + j as u64 * 3) / (1 + k as u64);
                for n in 0..500 {
                    rec.record(base + n % 97);
                }
                c.classes.insert("timer".into(), rec.finish());
                r.configs.push(c);
            }
        }
    }
    r.questions.push(Question {
        title: "q".into(),
        param: "hypervisor.timer_virt".into(),
        baseline: "off".into(),
        variants: vec!["on".into()],
        within: vec![],
        stats: vec!["mean".into()],
        classes: vec![],
    });
    r
}

fn x_ticks(svg: &str) -> Vec<String> {
    svg.match_indices("class=\"x-tick\"")
        .map(|(i, _)| {
            let rest = &svg[i..];
            let a = rest.find('>').unwrap() + 1;
            rest[a..a + rest[a..].find('<').unwrap()].to_string()
        })
        .collect()
}

#[test]
fn panels_share_axes_and_pair_off_with_on() {
    let html = report::render_html(&[("s.json".into(), sweep())]).unwrap();
    let start = html.find("<div class=\"multiples\">").expect("small multiples");
    let block = &html[start..start + html[start..].find("</div>").unwrap()];
    let panels: Vec<&str> = block.split("<svg").skip(1).collect();
    assert_eq!(panels.len(), 10, "one panel per level × bench");
    let first = x_ticks(panels[0]);
    assert!(first.len() >= 2);
    assert!(panels.iter().all(|p| x_ticks(p) == first), "every panel has the same x axis");
    // The legend of every panel names timer_virt=off and timer_virt=on, never `?`.
    assert!(panels.iter().all(|p| p.contains(">timer_virt=off<") && p.contains(">timer_virt=on<")), "{}", panels[0]);
    assert!(!block.contains("=?"));
    // More than four panels start folded.
    assert!(html[..start].ends_with("<details><summary>Show the 10 plots</summary>"));
}
