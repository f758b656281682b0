//! Xen from source for the lab (`irqlab-lab xen --xen-src DIR|TARBALL [--patches …] [--xen-config K=V …]`).
//!
//! Why: the S1 question is about a patch series (Xen's GICv4 direct-LPI RFC), so the lab must run
//! the hypervisor built from a given tree plus given patches plus given Kconfig settings, and say
//! exactly which. Steps, each refused or failed with one line:
//! 1. the tree must be Xen (`xen/Kconfig` and `xen/arch/arm/Kconfig`; a `.tar.xz|.tar.gz|.tar` of
//!    one, with or without one top folder, is unpacked first) — otherwise exit 2;
//! 2. the cache key is sha256 over (the tree's content, each patch's sha256, the settings in
//!    order); a build under `<lab cache>/xen-builds/<key>/xen` is reused without rebuilding;
//! 3. otherwise the tree is copied privately and the patches applied in order with `patch -p1
//!    --fuzz=0` (the first that does not apply exactly is exit 2, named with its hunk); each
//!    setting's symbol must be declared (`config SYM` / `menuconfig SYM`) in a Kconfig file of the
//!    patched tree — exit 2 otherwise. [`check`] does this step alone in a scratch copy, so `ab`
//!    refuses such a side before its first boot;
//! 4. `make -C xen defconfig`, the settings appended to `xen/.config`, `make -C xen olddefconfig`
//!    (Xen's own Kconfig, xen/tools/kconfig), each setting checked in the final `.config` (one that
//!    did not take, e.g. an unmet `depends on`, is exit 2 — never recorded as if it had), then
//!    `make -C xen` with `XEN_TARGET_ARCH=arm64 CROSS_COMPILE=aarch64-linux-gnu-` (Xen's
//!    cross-build variables, xen/Makefile and config/arm64.mk);
//! 5. `xen/xen`, the final `.config` and `build.json` (what was built) move into the cache
//!    atomically (a rename), so a killed build never leaves something that looks finished.
//!
//! Hashes come from coreutils' `sha256sum` (no hashing crate in the workspace).
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Instant;

/// The module's failures; [`BuildError::exit_code`] maps bad input to 2.
#[derive(Debug, thiserror::Error)]
pub enum BuildError {
    #[error("--xen-src {0}: not a Xen tree (no xen/Kconfig and xen/arch/arm/Kconfig{1})")]
    NotXen(PathBuf, String),
    #[error("--patches {0}: {1}")]
    BadPatch(PathBuf, String),
    #[error("--patches: {patch} does not apply to the tree (patch -p1 said: {why})")]
    PatchFails { patch: PathBuf, why: String },
    #[error("--xen-config {0}: {1}")]
    BadConfig(String, String),
    #[error("--xen-config {key}={want}: did not take after olddefconfig (the final .config has {got}; an unmet `depends on`?) — see {config}")]
    NotTaken { key: String, want: String, got: String, config: PathBuf },
    #[error("xen build: step `{step}` failed (log: {})", log.display())]
    Step { step: String, log: PathBuf },
    #[error("xen build: {0}")]
    Env(String),
    #[error("{path}: {source}")]
    Io { path: PathBuf, source: std::io::Error },
}

impl BuildError {
    pub fn exit_code(&self) -> i32 {
        match self {
            BuildError::NotXen(..) | BuildError::BadPatch(..) | BuildError::PatchFails { .. } | BuildError::BadConfig(..) | BuildError::NotTaken { .. } => 2,
            _ => 1,
        }
    }
}

impl From<BuildError> for crate::error::LabError {
    fn from(e: BuildError) -> Self {
        crate::error::LabError::Part { code: e.exit_code(), source: Box::new(e) }
    }
}

fn io(path: &Path) -> impl FnOnce(std::io::Error) -> BuildError + '_ {
    move |source| BuildError::Io { path: path.to_path_buf(), source }
}

/// What to build.
#[derive(Debug, Clone, Default)]
pub struct XenSource {
    /// A Xen tree, or a `.tar.xz|.tar.gz|.tar` of one.
    pub src: PathBuf,
    /// Patch files or directories of them (`*.patch`, `*.diff`, name order), applied in this order.
    pub patches: Vec<PathBuf>,
    /// `KEY=VALUE` (with or without `CONFIG_`).
    pub config: Vec<String>,
}

/// One applied patch as recorded.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct PatchRecord {
    pub file: String,
    pub subject: String,
    pub sha256: String,
}

/// What a build is, as recorded in its `build.json` and in every result that ran it.
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct BuildRecord {
    pub tree: String,
    pub tree_sha256: String,
    pub patches: Vec<PatchRecord>,
    /// The settings as `CONFIG_KEY=VALUE`, in the order given.
    pub config: Vec<String>,
    pub key: String,
    /// Seconds the cold build took (defconfig to binary).
    pub build_s: f64,
}

/// A usable build.
#[derive(Debug, Clone)]
pub struct Built {
    pub binary: PathBuf,
    /// The final `.config` of the build.
    pub config_file: PathBuf,
    pub record: BuildRecord,
    /// Taken from the cache (no build ran now).
    pub cached: bool,
}

impl Built {
    /// Xen's `xen-syms.map` kept with the build (builds cached before it was kept have none).
    pub fn syms_map(&self) -> Option<PathBuf> {
        self.binary.parent().map(|d| d.join("xen-syms.map")).filter(|p| p.is_file())
    }
}

impl Built {
    /// The record as result parameters (`xen.tree`, `xen.patches`, `xen.config`, …).
    pub fn params(&self) -> Vec<(String, String)> {
        let r = &self.record;
        let patches: Vec<String> = r.patches.iter().map(|p| format!("{} [{}] sha256:{}", p.file, p.subject, p.sha256)).collect();
        vec![
            ("xen.tree".into(), format!("{} (sha256 of content {})", r.tree, r.tree_sha256)),
            ("xen.patches".into(), if patches.is_empty() { "none".into() } else { patches.join("; ") }),
            ("xen.config".into(), if r.config.is_empty() { "defconfig".into() } else { format!("defconfig + {}", r.config.join(" ")) }),
            ("xen.build_key".into(), r.key.clone()),
        ]
    }

    /// Whether the final `.config` has `CONFIG_<sym>=y`.
    pub fn has(&self, sym: &str) -> bool {
        std::fs::read_to_string(&self.config_file).map(|c| config_value(&c, sym).as_deref() == Some("y")).unwrap_or(false)
    }
}

/// `KEY=VALUE` → (`KEY` without `CONFIG_`, `VALUE`); the error says what is wrong.
pub fn parse_setting(s: &str) -> Result<(String, String), BuildError> {
    let (k, v) = s.split_once('=').ok_or_else(|| BuildError::BadConfig(s.into(), "expected KEY=VALUE (e.g. GICV4=y)".into()))?;
    let k = k.trim().trim_start_matches("CONFIG_");
    if k.is_empty() || !k.chars().all(|c| c.is_ascii_alphanumeric() || c == '_') {
        return Err(BuildError::BadConfig(s.into(), "the key must be a Kconfig symbol ([A-Za-z0-9_]+)".into()));
    }
    if v.is_empty() {
        return Err(BuildError::BadConfig(s.into(), "empty value (use n to unset)".into()));
    }
    Ok((k.to_string(), v.to_string()))
}

/// The value `.config` text gives `sym` (`None` when unset or absent).
pub fn config_value(config: &str, sym: &str) -> Option<String> {
    let pre = format!("CONFIG_{sym}=");
    config.lines().find_map(|l| l.strip_prefix(&pre)).map(|v| v.trim().to_string())
}

/// Whether a Kconfig text declares `sym`.
pub fn declares(kconfig: &str, sym: &str) -> bool {
    kconfig.lines().any(|l| {
        let mut w = l.split_whitespace();
        matches!(w.next(), Some("config") | Some("menuconfig")) && w.next() == Some(sym)
    })
}

/// A patch's subject (`Subject:` with continuation lines, `[PATCH …]` removed).
pub fn patch_subject(text: &str) -> String {
    let mut lines = text.lines();
    while let Some(l) = lines.next() {
        if let Some(s) = l.strip_prefix("Subject:") {
            let mut subj = s.trim().to_string();
            for c in lines.by_ref() {
                if c.starts_with(' ') || c.starts_with('\t') {
                    subj.push(' ');
                    subj.push_str(c.trim());
                } else {
                    break;
                }
            }
            if subj.starts_with('[') {
                if let Some(i) = subj.find(']') {
                    subj = subj[i + 1..].trim().to_string();
                }
            }
            return subj;
        }
    }
    "(no Subject: line)".into()
}

/// The patch files in order: each argument, a directory contributing its `*.patch`/`*.diff` in name order.
pub fn patch_files(args: &[PathBuf]) -> Result<Vec<PathBuf>, BuildError> {
    let mut out = Vec::new();
    for a in args {
        if a.is_dir() {
            let mut v: Vec<PathBuf> = std::fs::read_dir(a)
                .map_err(io(a))?
                .filter_map(|e| e.ok().map(|e| e.path()))
                .filter(|p| p.is_file() && p.extension().is_some_and(|e| e == "patch" || e == "diff"))
                .collect();
            if v.is_empty() {
                return Err(BuildError::BadPatch(a.clone(), "a directory without *.patch or *.diff files".into()));
            }
            v.sort();
            out.extend(v);
        } else if a.is_file() {
            out.push(a.clone());
        } else {
            return Err(BuildError::BadPatch(a.clone(), "no such file or directory".into()));
        }
    }
    Ok(out)
}

fn sha256_file(p: &Path) -> Result<String, BuildError> {
    let o = Command::new("sha256sum").arg(p).output().map_err(|e| BuildError::Env(format!("cannot run sha256sum: {e}")))?;
    if !o.status.success() {
        return Err(BuildError::Env(format!("sha256sum {} failed", p.display())));
    }
    Ok(String::from_utf8_lossy(&o.stdout).split_whitespace().next().unwrap_or("").to_string())
}

fn sha256_bytes(b: &[u8]) -> Result<String, BuildError> {
    use std::io::Write;
    let mut c = Command::new("sha256sum")
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .spawn()
        .map_err(|e| BuildError::Env(format!("cannot run sha256sum: {e}")))?;
    c.stdin.take().expect("piped").write_all(b).map_err(|e| BuildError::Env(format!("sha256sum: {e}")))?;
    let o = c.wait_with_output().map_err(|e| BuildError::Env(format!("sha256sum: {e}")))?;
    Ok(String::from_utf8_lossy(&o.stdout).split_whitespace().next().unwrap_or("").to_string())
}

/// sha256 over every regular file's relative path and content under `root` (`.git` skipped), in path order.
fn tree_sha256(root: &Path) -> Result<String, BuildError> {
    let sh = "cd \"$1\" && find . -path ./.git -prune -o -type f -print0 | LC_ALL=C sort -z | xargs -0 -r sha256sum | sha256sum";
    let o = Command::new("sh").args(["-c", sh, "sh"]).arg(root).output().map_err(|e| BuildError::Env(format!("cannot hash the tree: {e}")))?;
    if !o.status.success() {
        return Err(BuildError::Env(format!("hashing {} failed: {}", root.display(), String::from_utf8_lossy(&o.stderr).trim())));
    }
    Ok(String::from_utf8_lossy(&o.stdout).split_whitespace().next().unwrap_or("").to_string())
}

fn is_xen(root: &Path) -> bool {
    root.join("xen/Kconfig").is_file() && root.join("xen/arch/arm/Kconfig").is_file()
}

fn is_tarball(p: &Path) -> bool {
    let n = p.file_name().and_then(|n| n.to_str()).unwrap_or("");
    p.is_file() && [".tar.xz", ".txz", ".tar.gz", ".tgz", ".tar"].iter().any(|s| n.ends_with(s))
}

/// The Xen root inside an unpacked directory: itself or its one top folder.
fn xen_root_in(dir: &Path) -> Option<PathBuf> {
    if is_xen(dir) {
        return Some(dir.to_path_buf());
    }
    let subs: Vec<PathBuf> = std::fs::read_dir(dir).ok()?.filter_map(|e| e.ok().map(|e| e.path())).filter(|p| p.is_dir()).collect();
    (subs.len() == 1 && is_xen(&subs[0])).then(|| subs[0].clone())
}

fn run_step(cmd: &mut Command, step: &str, log: &Path) -> Result<(), BuildError> {
    use std::io::Write;
    let mut f = std::fs::OpenOptions::new().create(true).append(true).open(log).map_err(io(log))?;
    let _ = writeln!(f, "\n== irqlab-lab: {step}");
    let f2 = f.try_clone().map_err(io(log))?;
    let st = cmd.stdout(f).stderr(f2).status().map_err(|e| BuildError::Env(format!("cannot run `{step}`: {e}")))?;
    if !st.success() {
        return Err(BuildError::Step { step: step.into(), log: log.to_path_buf() });
    }
    Ok(())
}

/// Checks the source and its inputs; returns the cache key's parts without building.
pub fn identify(s: &XenSource) -> Result<(String, String, Vec<(PathBuf, PatchRecord)>, Vec<(String, String)>), BuildError> {
    let settings = s.config.iter().map(|c| parse_setting(c)).collect::<Result<Vec<_>, _>>()?;
    let patches = patch_files(&s.patches)?;
    let mut recs = Vec::new();
    for p in patches {
        let text = std::fs::read(&p).map_err(io(&p))?;
        let subject = patch_subject(&String::from_utf8_lossy(&text));
        if !String::from_utf8_lossy(&text).contains("\n+++ ") {
            return Err(BuildError::BadPatch(p, "not a patch (no `+++` line)".into()));
        }
        recs.push((p.clone(), PatchRecord { file: p.display().to_string(), subject, sha256: sha256_bytes(&text)? }));
    }
    let tree_hash = if is_tarball(&s.src) {
        sha256_file(&s.src)?
    } else if s.src.is_dir() {
        if !is_xen(&s.src) {
            return Err(BuildError::NotXen(s.src.clone(), String::new()));
        }
        tree_sha256(&s.src)?
    } else {
        return Err(BuildError::NotXen(s.src.clone(), "; not a directory or a .tar.xz/.tar.gz/.tar".into()));
    };
    let mut keytext = format!("xen-build v1\ntree {tree_hash}\n");
    for (_, r) in &recs {
        keytext.push_str(&format!("patch {}\n", r.sha256));
    }
    for (k, v) in &settings {
        keytext.push_str(&format!("config CONFIG_{k}={v}\n"));
    }
    keytext.push_str("arch arm64 aarch64-linux-gnu-\n");
    let key = sha256_bytes(keytext.as_bytes())?[..20].to_string();
    Ok((key, tree_hash, recs, settings))
}

/// The inputs checked as a build would take them, before any boot (`ab`'s validation of a side,
/// `irqlab-lab xen`'s [`crate::route::check`]): the tree, each patch applied without fuzz to a
/// scratch copy, each setting's symbol declared in the patched tree. A build already in the
/// cache passed all this when it was made, so it is not checked again. Exit 2 names the patch
/// (and its hunk) or the key.
pub fn check(s: &XenSource, cache: &Path) -> Result<(), BuildError> {
    let (key, _, patches, settings) = identify(s)?;
    let parent = cache.join("xen-builds");
    if parent.join(&key).join("xen").is_file() {
        return Ok(());
    }
    std::fs::create_dir_all(&parent).map_err(io(&parent))?;
    let scratch = parent.join(format!(".{key}.check{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&scratch);
    std::fs::create_dir_all(&scratch).map_err(io(&scratch))?;
    let r = prepare_tree(s, &scratch, &patches, &settings, &scratch.join("check.log"));
    let _ = std::fs::remove_dir_all(&scratch);
    r.map(drop)
}

/// A private copy of the tree under `work/src` (unpacked from a tarball, or copied), the patches
/// applied in order without fuzz, and each setting's symbol found declared in its Kconfig files.
/// Returns the tree's root.
fn prepare_tree(s: &XenSource, work: &Path, patches: &[(PathBuf, PatchRecord)], settings: &[(String, String)], log: &Path) -> Result<PathBuf, BuildError> {
    let src_copy = work.join("src");
    let root = if is_tarball(&s.src) {
        std::fs::create_dir_all(&src_copy).map_err(io(&src_copy))?;
        run_step(Command::new("tar").arg("-xf").arg(&s.src).arg("-C").arg(&src_copy), "tar -xf (unpack the tree)", log)?;
        xen_root_in(&src_copy).ok_or_else(|| BuildError::NotXen(s.src.clone(), " in the archive, at its top or in its one top folder".into()))?
    } else {
        run_step(Command::new("cp").arg("-a").arg(&s.src).arg(&src_copy), "cp -a (private copy of the tree)", log)?;
        src_copy
    };
    for (p, _) in patches {
        apply(p, &root)?;
    }
    let kconfig = kconfig_text(&root)?;
    for (k, v) in settings {
        if !declares(&kconfig, k) {
            return Err(BuildError::BadConfig(format!("{k}={v}"), format!("no `config {k}` in the Kconfig files of the (patched) tree")));
        }
    }
    Ok(root)
}

/// `patch -p1 --fuzz=0`: a hunk whose context does not match exactly is refused, never applied
/// elsewhere than the patch says (GNU patch applies with up to 2 lines of fuzz by default, and a
/// series applied with fuzz is not the series that was reviewed). Offsets (the same context a
/// few lines away) are accepted, as `git apply` does.
fn apply(p: &Path, root: &Path) -> Result<(), BuildError> {
    let o = Command::new("patch")
        .args(["-p1", "--forward", "--batch", "--fuzz=0", "--no-backup-if-mismatch", "-r", "-", "-i"])
        .arg(std::fs::canonicalize(p).map_err(io(p))?)
        .current_dir(root)
        .output()
        .map_err(|e| BuildError::Env(format!("cannot run patch: {e}")))?;
    if o.status.success() {
        return Ok(());
    }
    let text = format!("{}{}", String::from_utf8_lossy(&o.stdout), String::from_utf8_lossy(&o.stderr));
    // Each failed hunk with the file `patch` was patching when it failed.
    let mut file = "?";
    let mut hunks = Vec::new();
    for l in text.lines() {
        if let Some(f) = l.strip_prefix("patching file ") {
            file = f.trim();
        } else if l.trim_start().starts_with("Hunk") && l.contains("FAILED") {
            hunks.push(format!("{file}: {}", l.trim()));
        }
    }
    let why = if hunks.is_empty() {
        text.lines().find(|l| !l.trim().is_empty() && !l.starts_with("patching file")).unwrap_or("").trim().to_string()
    } else {
        format!("{} (no fuzz allowed: a hunk's context must match exactly)", hunks.join("; "))
    };
    Err(BuildError::PatchFails { patch: p.to_path_buf(), why })
}

/// Every `Kconfig*` file under the tree's `xen/`, concatenated.
fn kconfig_text(root: &Path) -> Result<String, BuildError> {
    let find = Command::new("find").arg(root.join("xen")).args(["-name", "Kconfig*", "-type", "f"]).output().map_err(|e| BuildError::Env(format!("cannot run find: {e}")))?;
    let mut kconfig = String::new();
    for f in String::from_utf8_lossy(&find.stdout).lines() {
        kconfig.push_str(&std::fs::read_to_string(f).unwrap_or_default());
        kconfig.push('\n');
    }
    Ok(kconfig)
}

/// A build from `cache/xen-builds/<key>`.
fn cached(dir: &Path, cached: bool) -> Result<Built, BuildError> {
    let rj = dir.join("build.json");
    let text = std::fs::read_to_string(&rj).map_err(io(&rj))?;
    let record: BuildRecord = serde_json::from_str(&text).map_err(|e| BuildError::Env(format!("{}: {e}", rj.display())))?;
    Ok(Built { binary: dir.join("xen"), config_file: dir.join("config"), record, cached })
}

/// The build for `s`, from `cache/xen-builds` or built now (see the module doc).
pub fn ensure(s: &XenSource, cache: &Path) -> Result<Built, BuildError> {
    let (key, tree_hash, patches, settings) = identify(s)?;
    let parent = cache.join("xen-builds");
    let dir = parent.join(&key);
    if dir.join("xen").is_file() && dir.join("build.json").is_file() {
        eprintln!("irqlab-lab: Xen build {key} from the cache ({})", dir.display());
        return cached(&dir, true);
    }
    std::fs::create_dir_all(&parent).map_err(io(&parent))?;
    let work = parent.join(format!(".{key}.work{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&work);
    std::fs::create_dir_all(&work).map_err(io(&work))?;
    let log = parent.join(format!("{key}.log"));
    let _ = std::fs::remove_file(&log);
    let what = if settings.is_empty() { "defconfig".to_string() } else { s.config.join(" ") };
    eprintln!("irqlab-lab: building Xen {key} (tree {}, {} patch(es), {what}); log → {}", s.src.display(), patches.len(), log.display());
    let built = prepare_tree(s, &work, &patches, &settings, &log).and_then(|root| build(&root, &settings, &parent, &key, &log));
    let (bin, cfg, build_s) = match built {
        Ok(b) => b,
        Err(e) => {
            // Bad input leaves nothing behind; a failed build step keeps its tree for the log.
            if e.exit_code() == 2 {
                let _ = std::fs::remove_dir_all(&work);
            }
            return Err(e);
        }
    };
    let record = BuildRecord {
        tree: s.src.display().to_string(),
        tree_sha256: tree_hash,
        patches: patches.into_iter().map(|(_, r)| r).collect(),
        config: settings.iter().map(|(k, v)| format!("CONFIG_{k}={v}")).collect(),
        key: key.clone(),
        build_s,
    };
    install(&parent, &dir, &key, (&bin, &cfg), &record, &log)?;
    let _ = std::fs::remove_dir_all(&work);
    eprintln!("irqlab-lab: built Xen {key} in {build_s:.0} s → {}", dir.join("xen").display());
    cached(&dir, false)
}

/// defconfig, the settings, olddefconfig (each setting checked in the final `.config`), then
/// the cross build. Returns (xen/xen, the final .config, seconds).
fn build(root: &Path, settings: &[(String, String)], parent: &Path, key: &str, log: &Path) -> Result<(PathBuf, PathBuf, f64), BuildError> {
    let t0 = Instant::now();
    let make = |args: &[&str]| {
        let mut c = Command::new("make");
        c.arg("-C").arg(root.join("xen")).args(args).env("XEN_TARGET_ARCH", "arm64").env("CROSS_COMPILE", "aarch64-linux-gnu-");
        c
    };
    run_step(&mut make(&["defconfig"]), "make -C xen defconfig", log)?;
    let cfg = root.join("xen/.config");
    let mut text = std::fs::read_to_string(&cfg).map_err(io(&cfg))?;
    for (k, v) in settings {
        text.push_str(&if v == "n" { format!("# CONFIG_{k} is not set\n") } else { format!("CONFIG_{k}={v}\n") });
    }
    std::fs::write(&cfg, text).map_err(io(&cfg))?;
    run_step(&mut make(&["olddefconfig"]), "make -C xen olddefconfig", log)?;
    let fin = std::fs::read_to_string(&cfg).map_err(io(&cfg))?;
    for (k, v) in settings {
        let got = config_value(&fin, k);
        let ok = if v == "n" { got.is_none() } else { got.as_deref() == Some(v.as_str()) };
        if !ok {
            let kept = parent.join(format!("{key}.config"));
            let _ = std::fs::copy(&cfg, &kept);
            let got = got.map(|g| format!("CONFIG_{k}={g}")).unwrap_or_else(|| "it unset".into());
            return Err(BuildError::NotTaken { key: k.clone(), want: v.clone(), got, config: kept });
        }
    }
    let jobs = std::thread::available_parallelism().map(|n| n.get()).unwrap_or(2).to_string();
    run_step(&mut make(&["-j", &jobs]), "make -C xen", log)?;
    let bin = root.join("xen/xen");
    if !bin.is_file() {
        return Err(BuildError::Step { step: "make -C xen (no xen/xen produced)".into(), log: log.to_path_buf() });
    }
    Ok((bin, cfg, t0.elapsed().as_secs_f64()))
}

/// The binary, its `.config` and `build.json` into `cache/xen-builds/<key>` atomically (a
/// rename), so a killed build never leaves something that looks finished.
fn install(parent: &Path, dir: &Path, key: &str, (bin, cfg): (&Path, &Path), record: &BuildRecord, log: &Path) -> Result<(), BuildError> {
    let stage = parent.join(format!(".{key}.stage{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&stage);
    std::fs::create_dir_all(&stage).map_err(io(&stage))?;
    std::fs::copy(bin, stage.join("xen")).map_err(io(bin))?;
    std::fs::copy(cfg, stage.join("config")).map_err(io(cfg))?;
    // Xen's symbol map (written beside xen-syms by Xen's link step): the census names functions
    // from it. A build without one still boots; its census counts by exception level only.
    let _ = std::fs::copy(bin.with_file_name("xen-syms.map"), stage.join("xen-syms.map"));
    let rj = stage.join("build.json");
    std::fs::write(&rj, serde_json::to_vec_pretty(record).expect("serializable")).map_err(io(&rj))?;
    let _ = std::fs::remove_dir_all(dir);
    std::fs::rename(&stage, dir).map_err(io(dir))?;
    let _ = std::fs::copy(log, dir.join("build.log"));
    Ok(())
}

#[cfg(test)]
mod tests;
