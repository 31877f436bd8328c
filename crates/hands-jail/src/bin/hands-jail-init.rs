//! The jail's init as a program of its own (the `hands` binary also answers `hands __jail-init`).

fn main() {
    std::process::exit(hands_jail::init::main());
}
