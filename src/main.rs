//! The `stalwart` binary: see [`stalwart::cli`].

fn main() {
    std::process::exit(stalwart::cli::main());
}
