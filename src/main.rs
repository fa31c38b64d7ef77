//! The `stalwart` binary: see [`stalwart::main`].

fn main() {
    std::process::exit(stalwart::main());
}
