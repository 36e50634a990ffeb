//! The README's Slurm job arrays, run for real (`scripts/slurm_array.sh`):
//! a one-node Slurm on this machine, 3 shards of the sample annotated and 3
//! shards of a self-play run, each with `--resume`, one task killed midway
//! and requeued, the shards merged, the merged file's bytes equal to the
//! unsharded run's. Needs root, Debian's slurm-wlm and munge, hence the
//! `slurm` feature.

use std::path::Path;

use crate::util::{TempDir, sample};

#[test]
fn the_readme_array_on_slurm_merges_to_the_unsharded_bytes() {
    let dir = TempDir::new("slurm");
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("scripts/slurm_array.sh");
    let out = std::process::Command::new("bash")
        .arg(script)
        .arg(env!("CARGO_BIN_EXE_kibitz"))
        .arg(sample())
        .arg(dir.root())
        .output()
        .expect("bash");
    let text = String::from_utf8_lossy(&out.stdout);
    println!("{text}");
    assert!(out.status.success(), "{text}{}", String::from_utf8_lossy(&out.stderr));
    for run in ["annotate", "selfplay"] {
        assert!(text.contains(&format!("slurm: {run}: requeued: yes")), "{text}");
        assert!(text.contains(&format!("slurm: {run}: merged equals unsharded")), "{text}");
    }
}
