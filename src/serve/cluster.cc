// Serve mode's discrete-event cluster (being written).
namespace kvpolicy {}
