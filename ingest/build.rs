//! Compiles the Apollo message subset, the HD map, routing and Cyber record formats in `proto/` without a system `protoc`: `protox` parses the `.proto`
//! files into a `FileDescriptorSet`, which is both embedded (for JSON and text-format decoding through
//! `prost-reflect`) and handed to `prost-build` to generate the Rust types.

use std::path::PathBuf;

use prost::Message;

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let files = [
        "proto/header.proto",
        "proto/geometry.proto",
        "proto/vehicle_signal.proto",
        "proto/localization.proto",
        "proto/chassis.proto",
        "proto/perception_obstacle.proto",
        "proto/traffic_light.proto",
        "proto/control_command.proto",
        "proto/envelope.proto",
        "proto/hdmap.proto",
        "proto/routing.proto",
        "proto/record.proto",
    ];
    for file in files {
        println!("cargo:rerun-if-changed={file}");
    }
    let fds = protox::compile(files, ["proto"])?;
    let out_dir = PathBuf::from(std::env::var("OUT_DIR")?);
    std::fs::write(out_dir.join("apollo_subset.fds"), fds.encode_to_vec())?;
    prost_build::Config::new().compile_fds(fds)?;
    Ok(())
}
