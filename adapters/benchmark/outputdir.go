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

type environmentImageKey struct{}

// WithEnvironmentImage tells Evaluate to start the verifier from image: the
// agent's environment committed at this checkpoint (files installed outside
// the workspace included). Without it a container benchmark starts from its
// task image plus the checkpoint's workspace.
func WithEnvironmentImage(ctx context.Context, image string) context.Context {
	return context.WithValue(ctx, environmentImageKey{}, image)
}

// EnvironmentImage is the image WithEnvironmentImage gave, or "".
func EnvironmentImage(ctx context.Context) string {
	s, _ := ctx.Value(environmentImageKey{}).(string)
	return s
}
