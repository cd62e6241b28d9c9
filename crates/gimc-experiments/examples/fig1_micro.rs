//! Micro-timings of the dense kernels behind gimc-fig1's IMC fits at n = 200 (the row-space
//! reduction's QR, Q products, Φ·W, the n × n eigendecomposition), single-threaded:
//! `RAYON_NUM_THREADS=1 cargo run --release -p gimc-experiments --example fig1_micro`.
#![allow(clippy::unwrap_used, clippy::print_stdout, missing_docs)]
use gimc_linalg::faer::Mat;
use gimc_linalg::rng::{gaussian_mat, seeded};
use std::time::Instant;
fn t<T>(name: &str, reps: usize, mut f: impl FnMut() -> T) {
    let s = Instant::now();
    for _ in 0..reps {
        std::hint::black_box(f());
    }
    println!(
        "{name}: {:.3} ms",
        s.elapsed().as_secs_f64() * 1e3 / reps as f64
    );
}
fn main() {
    let mut rng = seeded(1);
    let n = 200;
    for d in [400usize, 1600, 3200] {
        let phi: Mat<f64> = gaussian_mat(&mut rng, n, d, 1.0);
        println!("D = {d}");
        t("orthonormalize", 10, || {
            gimc_linalg::dense::orthonormalize(phi.transpose())
        });
        let v = gimc_linalg::dense::orthonormalize(phi.transpose());
        t("phi*v", 10, || &phi * &v);
        t("qr only", 10, || {
            gimc_linalg::dense::HouseholderQr::new(phi.transpose())
        });
        t("gram phi phiT", 10, || &phi * phi.transpose());
        let w: Mat<f64> = gaussian_mat(&mut rng, d, 20, 1.0);
        t("phi*w", 50, || &phi * &w);
        let qr = gimc_linalg::dense::HouseholderQr::new(phi.transpose());
        t("qr+R", 10, || {
            let q = gimc_linalg::dense::HouseholderQr::new(phi.transpose());
            q.thin_r().transpose().to_owned()
        });
        let alpha: Mat<f64> = gaussian_mat(&mut rng, n, 20, 1.0);
        t("apply Q", 50, || {
            let mut y = Mat::<f64>::zeros(d, 20);
            y.as_mut().subrows_mut(0, n).copy_from(&alpha);
            let mut buf = gimc_linalg::faer::dyn_stack::MemBuffer::new(gimc_linalg::faer::linalg::householder::apply_block_householder_sequence_on_the_left_in_place_scratch::<f64>(d, qr.coeff().nrows(), 20));
            gimc_linalg::faer::linalg::householder::apply_block_householder_sequence_on_the_left_in_place_with_conj(qr.basis(), qr.coeff(), gimc_linalg::faer::Conj::No, y.as_mut(), gimc_linalg::faer::Par::Seq, gimc_linalg::faer::dyn_stack::MemStack::new(&mut buf));
            y
        });
        t("V*alpha", 50, || &v * &alpha);
    }
    let l: Mat<f64> = gaussian_mat(&mut rng, n, n, 1.0);
    let g = l.transpose() * &l;
    t("sym_eig 200", 10, || {
        gimc_linalg::eig::sym_eig(g.as_ref()).unwrap()
    });
}
