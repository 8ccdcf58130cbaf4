//! The one integration-test binary (one link step keeps CI fast); each module is a topic.

mod suite;
