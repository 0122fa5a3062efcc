//! Store faults and the client that survives them: the fault-injecting store, the retrying client, and the pass that runs every check through both.

pub mod retrying;
pub mod through_faults;
pub mod unreliable;
