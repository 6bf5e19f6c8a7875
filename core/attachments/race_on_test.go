//go:build race

package attachments

// raceDetector: the race detector instruments allocations, so what a
// decode allocates under it is the detector's figure, not the decode's.
const raceDetector = true
