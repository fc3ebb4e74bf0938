// Shared by every kernel. Element offsets and strides arrive as push
// constants (not descriptor offsets) so any row of any tensor can be
// addressed regardless of the device's offset-alignment rules.

// Score given to masked attention entries; softmax turns it into exactly 0.
const float TXLM_MASKED = -3.0e38;
bool txlm_is_masked(float s) { return s <= -1.0e38; }
