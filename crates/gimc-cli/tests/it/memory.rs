//! The memory pre-flight: a fit whose estimated peak memory exceeds the memory
//! available is refused at once with one line naming both figures and the option to lower,
//! instead of being killed by the kernel.

use std::path::PathBuf;
use std::process::{Command, Output};
use std::time::{Duration, Instant};

use crate::{stderr, temp_file};

/// A generated multi-class LIBSVM file of 1,211 rows and 40 features.
fn rows_1211() -> PathBuf {
    let mut s = String::new();
    for i in 0..1211usize {
        s.push_str(&format!("{}", i % 4 + 1));
        for j in 0..40usize {
            let v = (((i * 31 + j * 17) % 97) as f64) / 97.0;
            s.push_str(&format!(" {}:{v}", j + 1));
        }
        s.push('\n');
    }
    temp_file("rows1211.svm", s.as_bytes())
}

fn run(args: &[&str], limit: Option<&str>) -> (Output, Duration) {
    let mut c = Command::new(env!("CARGO_BIN_EXE_gimc"));
    c.args(args).env_remove("GIMC_DATA");
    match limit {
        Some(l) => c.env("GIMC_MEMORY_LIMIT", l),
        None => c.env_remove("GIMC_MEMORY_LIMIT"),
    };
    let t = Instant::now();
    let o = c.output().expect("the gimc binary runs");
    (o, t.elapsed())
}

fn assert_refused(o: &Output, took: Duration, available: &str) {
    let err = stderr(o);
    assert_eq!(o.status.code(), Some(1), "{err}");
    assert_eq!(err.trim_end().lines().count(), 1, "{err}");
    assert!(err.starts_with("gimc: error: fit needs about "), "{err}");
    assert!(err.contains("lower --m"), "{err}");
    assert!(err.contains(available), "{err}");
    assert!(
        [" TiB, ", " PiB, ", " EiB, "]
            .iter()
            .any(|u| err.contains(u)),
        "{err}"
    );
    assert!(took < Duration::from_secs(5), "took {took:?}: {err}");
}

#[test]
fn fit_with_a_huge_m_is_refused_at_once_naming_both_figures_and_the_option() {
    let data = rows_1211();
    let out = temp_file("huge.gimc", b"");
    let args = [
        "-q",
        "fit",
        data.to_str().unwrap(),
        "--method",
        "gimc-lff",
        "--m",
        "3000000",
        "-o",
        out.to_str().unwrap(),
    ];
    let (o, took) = run(&args, Some("8G"));
    assert_refused(&o, took, "8.0 GiB available");
    // Φ is 1211 × 6,000,000 doubles (54.1 GiB), ΦᵀΦ is 6e6 × 6e6 (262 TiB); Φ is then
    // streamed in blocks of rows, and the parts say so
    let err = stderr(&o);
    assert!(err.contains(" TiB, 8.0 GiB available"), "{err}");
    assert!(err.contains("line-search trial Φ block "), "{err}");
    // the memory detected on this machine: no machine has the 2.6 EiB of ΦᵀΦ at m = 3e8
    let mut huge = args;
    huge[6] = "300000000";
    let (o, took) = run(&huge, None);
    assert_refused(&o, took, " available");
    // the default search is refused the same way
    let auto = [
        "-q",
        "fit",
        data.to_str().unwrap(),
        "--m",
        "3000000",
        "-o",
        out.to_str().unwrap(),
    ];
    let (o, took) = run(&auto, Some("8G"));
    assert_refused(&o, took, "8.0 GiB available");
    // a malformed override is an error too
    let (o, _) = run(&args, Some("lots"));
    assert_eq!(o.status.code(), Some(1));
    assert!(stderr(&o).contains("GIMC_MEMORY_LIMIT"), "{}", stderr(&o));
}

#[test]
fn fit_prints_its_estimate_unless_quiet() {
    let data = rows_1211();
    let out = temp_file("small-est.gimc", b"");
    let (o, _) = run(
        &[
            "fit",
            data.to_str().unwrap(),
            "--m",
            "20",
            "--iters",
            "1",
            "-o",
            out.to_str().unwrap(),
        ],
        Some("8G"),
    );
    let err = stderr(&o);
    assert!(o.status.success(), "{err}");
    assert!(
        err.contains("estimated peak memory: ") && err.contains("(8.0 GiB available)"),
        "{err}"
    );
}

#[test]
fn an_input_with_billions_of_columns_is_refused_naming_what_to_lower() {
    // two rows, one of them with a feature index of 4·10⁹: the column analysis and the maps'
    // parameters are sized before anything of that width is allocated
    let data = temp_file("wide.svm", b"1 4000000000:1\n2 1:1\n");
    let out = temp_file("wide.gimc", b"");
    let fit = |m: &str| {
        run(
            &[
                "-q",
                "fit",
                data.to_str().unwrap(),
                "--m",
                m,
                "-o",
                out.to_str().unwrap(),
            ],
            Some("8G"),
        )
        .0
    };
    let o = fit("500");
    let err = stderr(&o);
    assert_eq!(o.status.code(), Some(1), "{err}");
    assert!(
        err.contains("lower --m") && err.contains("4000000000"),
        "{err}"
    );
    // with one direction per map, the per-column arrays are the largest term
    let o = fit("1");
    let err = stderr(&o);
    assert_eq!(o.status.code(), Some(1), "{err}");
    assert!(err.contains("lower the number of feature columns"), "{err}");
}
