package benchmark

import "context"

type outputDirKey struct{}

// WithOutputDir tells Evaluate where to keep the evaluator's own output
// files for this checkpoint (a folder hoh owns, outside every role's view).
func WithOutputDir(ctx context.Context, dir string) context.Context {
	return context.WithValue(ctx, outputDirKey{}, dir)
}

// OutputDir is the folder WithOutputDir gave, or "".
func OutputDir(ctx context.Context) string {
	d, _ := ctx.Value(outputDirKey{}).(string)
	return d
}
