use std::time::Duration;

use super::*;

#[test]
fn buckets_are_exact_below_eight_then_log_linear() {
    for ns in 0..8 {
        assert_eq!(bucket_floor(bucket_of(ns)), ns);
    }
    // 8..16 has one bucket per value, 16..32 one per 2, 1024..2048 one per 128.
    assert_eq!(bucket_floor(bucket_of(15)), 15);
    assert_eq!(bucket_floor(bucket_of(17)), 16);
    assert_eq!(bucket_floor(bucket_of(1024 + 200)), 1024 + 128);
    assert_eq!(bucket_floor(bucket_of(u64::MAX)), 15 << 60);
    // Every bucket's floor maps back to the bucket, and floors increase.
    for i in 0..N_BUCKETS {
        assert_eq!(bucket_of(bucket_floor(i)), i, "bucket {i}");
        if i > 0 {
            assert!(bucket_floor(i) > bucket_floor(i - 1));
        }
    }
}

#[test]
fn quantiles_of_a_known_distribution() {
    let h = LatencyHistogram::default();
    assert_eq!(h.summary(), LatencySummary::default());
    // 1..=100 µs: median 50 µs, p99 99 µs; buckets at that scale are 4096 ns wide (2^15..2^16 / 8).
    for us in 1..=100u64 {
        h.record(Duration::from_micros(us));
    }
    let s = h.summary();
    assert_eq!(s.count, 100);
    assert!(
        s.p50_ns <= 50_000 && s.p50_ns as f64 >= 50_000.0 * 0.875,
        "{s:?}"
    );
    assert!(
        s.p99_ns <= 99_000 && s.p99_ns as f64 >= 99_000.0 * 0.875,
        "{s:?}"
    );
    assert!(
        s.max_ns <= 100_000 && s.max_ns as f64 >= 100_000.0 * 0.875,
        "{s:?}"
    );
}

#[test]
fn snapshot_copies_counters() {
    let m = Metrics::default();
    m.n_frames.fetch_add(3, Ordering::Relaxed);
    m.n_data_dropped.fetch_add(2, Ordering::Relaxed);
    m.step.record_ns(5);
    let s = m.snapshot(vec![1, 0]);
    assert_eq!((s.n_frames, s.n_data_dropped), (3, 2));
    assert_eq!(s.step.count, 1);
    assert_eq!(s.step.p50_ns, 5);
    assert_eq!(s.data_queue_lens, vec![1, 0]);
}
