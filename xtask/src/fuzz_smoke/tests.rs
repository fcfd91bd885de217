//! Which libFuzzer endings of `log_image` count as libhdf5's (contained) and which fail the smoke.

use crate::fuzz::is_libhdf5_fault;

#[test]
fn signals_without_a_rust_panic_hangs_and_runaway_memory_are_libhdf5s() {
    let segv =
        "==1== ERROR: libFuzzer: deadly signal\nNOTE: libFuzzer has rudimentary signal handlers.";
    assert!(is_libhdf5_fault(segv));
    assert!(is_libhdf5_fault(
        "==1== ERROR: libFuzzer: timeout after 3 seconds"
    ));
    assert!(is_libhdf5_fault(
        "==1== ERROR: libFuzzer: out-of-memory (used: 2082Mb; limit: 2048Mb)"
    ));
    // A campaign's build has AddressSanitizer, which reports the fault itself.
    let asan = "==2==ERROR: AddressSanitizer: SEGV on unknown address (pc 0x7f57e2664c1d)\n\
                #0 0x7f57e2664c1d in H5HG_read (/lib/x86_64-linux-gnu/libhdf5_serial.so.103+0x167b56)\n\
                SUMMARY: AddressSanitizer: SEGV (/lib/x86_64-linux-gnu/libhdf5_serial.so.103+0x167b56) \
                (BuildId: e923ff) in H5HG_read";
    assert!(is_libhdf5_fault(asan));
    // libhdf5 faulting inside a C-library call it made: the summary names the C library.
    let memcpy = "==3==ERROR: AddressSanitizer: SEGV on unknown address 0x000000000000\n\
        #0 0x7ff8 in __memcpy_avx512_unaligned_erms string/../sysdeps/x86_64/multiarch/memmove.S:362\n\
        #1 0x5571 in memcpy compiler-rt/lib/asan/../sanitizer_common/sanitizer_common_interceptors.inc:117:5\n\
        #2 0x7ff8 in H5VM_memcpyvv (/lib/x86_64-linux-gnu/libhdf5_serial.so.103+0x2c1fca)\n\
        #3 0x7ff8 in H5Dread (/lib/x86_64-linux-gnu/libhdf5_serial.so.103+0xc7f74)\n\
        SUMMARY: AddressSanitizer: SEGV string/../sysdeps/x86_64/multiarch/memmove.S:362 in memcpy";
    assert!(is_libhdf5_fault(memcpy));
}

#[test]
fn sanitizer_reports_in_our_code_are_ours() {
    let ours = "==2==ERROR: AddressSanitizer: heap-buffer-overflow on address 0x602000000011\n\
                SUMMARY: AddressSanitizer: heap-buffer-overflow (log_image+0x1234) \
                in scenarios::log::reader::read_file";
    assert!(!is_libhdf5_fault(ours));
    let our_memcpy = "==3==ERROR: AddressSanitizer: SEGV on unknown address 0x000000000000\n\
        #0 0x7ff8 in __memcpy_avx512_unaligned_erms string/../sysdeps/x86_64/multiarch/memmove.S:362\n\
        #1 0x5571 in scenarios::log::reader::read_file scenarios/src/log/reader.rs:120\n\
        #2 0x7ff8 in H5Dread (/lib/x86_64-linux-gnu/libhdf5_serial.so.103+0xc7f74)\n\
        SUMMARY: AddressSanitizer: SEGV string/../sysdeps/x86_64/multiarch/memmove.S:362 in memcpy";
    assert!(!is_libhdf5_fault(our_memcpy));
    let panic_then_libhdf5 = "thread '<unnamed>' panicked at scenarios/src/log/reader.rs:9:5:\n\
                SUMMARY: AddressSanitizer: SEGV (/lib/x86_64-linux-gnu/libhdf5_serial.so.103+0x1) in H5A__close";
    assert!(!is_libhdf5_fault(panic_then_libhdf5));
}

#[test]
fn panics_stack_overflows_and_failed_rust_allocations_are_ours() {
    let panic = "thread '<unnamed>' panicked at scenarios/src/log/reader.rs:9:5:\nboom\n\
                 ==1== ERROR: libFuzzer: deadly signal";
    assert!(!is_libhdf5_fault(panic));
    let overflow = "thread 'main' has overflowed its stack\nfatal runtime error: stack overflow\n\
         ==1== ERROR: libFuzzer: deadly signal";
    assert!(!is_libhdf5_fault(overflow));
    let alloc =
        "memory allocation of 8000000016 bytes failed\n==1== ERROR: libFuzzer: deadly signal";
    assert!(!is_libhdf5_fault(alloc));
    assert!(!is_libhdf5_fault(
        "INFO: Running with entropic power schedule"
    ));
}

#[test]
fn a_run_past_its_limit_is_killed_and_one_within_it_gives_its_status_and_output() {
    use super::run_bounded;
    use std::process::Command;
    use std::time::{Duration, Instant};
    let dir = std::env::temp_dir().join(format!("xtask-run-bounded-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let out = dir.join("out");
    let started = Instant::now();
    let status = run_bounded(
        Command::new("sh").args(["-c", "echo started; sleep 30"]),
        &out,
        Duration::from_millis(500),
    )
    .unwrap();
    assert!(status.is_none(), "{status:?}");
    assert!(started.elapsed() < Duration::from_secs(10));
    assert_eq!(std::fs::read_to_string(&out).unwrap(), "started\n");
    let status = run_bounded(
        Command::new("sh").args(["-c", "echo done >&2; exit 3"]),
        &out,
        Duration::from_secs(30),
    )
    .unwrap();
    assert_eq!(status.and_then(|s| s.code()), Some(3));
    assert_eq!(std::fs::read_to_string(&out).unwrap(), "done\n");
    let _ = std::fs::remove_dir_all(&dir);
}
