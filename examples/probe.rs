// scratch: not committed
use std::time::Instant;
fn rss()->String{std::fs::read_to_string("/proc/self/status").unwrap().lines().filter(|l|l.starts_with("VmRSS")||l.starts_with("VmHWM")).collect::<Vec<_>>().join(" ")}
use stalwart::rulebook::compile::Input;
use stalwart::rulebook::flows::Version;
use stalwart::rulebook::{colang1, colang2};
fn main() {
    let a: Vec<String> = std::env::args().collect();
    let text = std::fs::read_to_string(&a[1]).unwrap();
    let v2 = a.get(2).is_some_and(|x| x == "2");
    let t = Instant::now();
    let flows = if v2 {
        let f = colang2::parse(&text).unwrap();
        eprintln!("parse {:?} {}", t.elapsed(), rss());
        colang2::lower(&f)
    } else {
        let f = colang1::parse(&text).unwrap();
        eprintln!("parse {:?} {}", t.elapsed(), rss());
        colang1::lower(&f)
    };
    eprintln!("lower {:?} flows {} {}", t.elapsed(), flows.flows.len(), rss());
    let (c, u) = stalwart::rulebook::compile::compile_measured(&[Input { path: "x".into(), version: if v2 {Version::V2} else {Version::V1}, flows: &flows }], &Default::default(), 0); eprintln!("{u:?}"); let c = match c { Ok(c) => c, Err(o) => { eprintln!("{}", o.message()); return } };
    eprintln!("compile {:?} routes {} {}", t.elapsed(), c.routes.len(), rss());
}
