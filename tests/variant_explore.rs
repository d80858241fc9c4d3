mod common;
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn explore() {
    let v = common::variant::start(6.0).await;
    let opts = linkcert::check::CheckOptions {
        seed: 7,
        cases: 24,
        concurrency: 2,
        ..Default::default()
    };
    let r = linkcert::check::run(common::spec(), v.target(), opts)
        .await
        .unwrap();
    println!("{}", r.summary());
    for c in &r.checks {
        if c.verdict != linkcert::check::model::Verdict::Pass {
            println!("{} {} {:?} {:?}", c.id, c.operation, c.verdict, c.skipped);
            for f in c.findings.iter().take(3) {
                println!(
                    "    exp: {} | act: {} | {}",
                    f.expected, f.actual, f.message
                );
                if let Some(x) = &f.exchange {
                    println!("      {}", x.curl);
                }
            }
        }
    }
}
