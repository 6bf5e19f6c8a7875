//go:build !race

package attachments

// raceDetector: see race_on_test.go.
const raceDetector = false
