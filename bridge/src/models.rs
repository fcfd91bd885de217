//! The swappable model: an `ArcSwap` holding the current [`DecideFactory`] and its generation.
//!
//! [`ModelStore::swap`] replaces the model without stopping the bridge (on SIGHUP or a `/avguard/control`
//! reload). Each input a connection queues carries the slot current at that moment, and its worker starts a
//! fresh session at the first frame of a newer generation: a reload takes effect between a client's
//! messages in the order they were sent, whatever is still waiting in the queue.

use std::sync::Arc;

use arc_swap::ArcSwap;

use crate::decide::DecideFactory;

/// The current model and its generation number.
pub struct ModelSlot {
    /// Bumped on every swap.
    pub generation: u64,
    /// Makes per-connection sessions.
    pub factory: Box<dyn DecideFactory>,
}

/// The swappable model shared by all workers.
pub struct ModelStore {
    slot: ArcSwap<ModelSlot>,
}

impl ModelStore {
    /// A store holding `factory` as generation 0.
    pub fn new(factory: Box<dyn DecideFactory>) -> Self {
        ModelStore {
            slot: ArcSwap::from_pointee(ModelSlot {
                generation: 0,
                factory,
            }),
        }
    }

    /// Replaces the model; returns the new generation.
    pub fn swap(&self, factory: Box<dyn DecideFactory>) -> u64 {
        let generation = self.slot.load().generation + 1;
        self.slot.store(Arc::new(ModelSlot {
            generation,
            factory,
        }));
        generation
    }

    /// The current model.
    pub fn current(&self) -> Arc<ModelSlot> {
        self.slot.load_full()
    }
}
