package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/reme-dev/reme/jobs"
)

type autoResourceCmd struct {
	Paths         []string `arg:"" optional:"" name:"path" help:"Resource files (added or modified is decided from what is known; a missing file with a card is deleted)."`
	Changes       string   `help:"ReMe's form: a JSON list of {\"path\": \"resource/…\", \"change\": \"added|modified|deleted\"}." placeholder:"JSON"`
	IncludeImages *bool    `name:"include-images" negatable:"" help:"Process image resources (default: config resource.include_images, true)."`
	Language      string   `enum:",en,zh" default:"" help:"Prompt language: en or zh."`
	Fallback      string   `enum:",extractive,none" default:"" help:"With extractive, a text resource whose model run failed gets the extractive card (default none)."`
}

func (autoResourceCmd) Help() string {
	return `Turns files under resource/ into daily cards (daily/DATE/<name>.md), found again
later through their source_resource link; the resource file itself is never
moved or changed. Text: md, txt, json, jsonl, csv, yaml, html. Images (png, jpg,
webp, gif, bmp, tiff) get a caption card from the vision model. A file under
resource/YYYY-MM-DD/ belongs to that day; a file directly under resource/ to
the day it is first processed.`
}

func (c *autoResourceCmd) Run(ctx context.Context, app *App) error {
	var changes []jobs.ResourceChange
	if c.Changes != "" {
		if err := json.Unmarshal([]byte(c.Changes), &changes); err != nil {
			return answerError{"AutoResourceStep requires changes: list[dict] (" + jsonProblem(err) + ")"}
		}
	}
	for _, p := range c.Paths {
		changes = append(changes, jobs.ResourceChange{Path: p})
	}
	if len(changes) == 0 {
		return usageError{fmt.Errorf("give resource paths or changes=JSON")}
	}
	env, req, err := app.resourceJob(ctx, c.IncludeImages, c.Language)
	if err != nil {
		return err
	}
	req.Changes = changes
	req.Fallback = c.Fallback
	res, err := jobs.AutoResource(ctx, env, req)
	if err != nil {
		return app.reportMemory(nil, err)
	}
	if app.Globals.JSON {
		if err := app.printJSON(res); err != nil {
			return err
		}
	} else {
		for _, it := range res.Results {
			fmt.Fprintln(app.Stdout, it.Line())
		}
	}
	if !res.Success {
		return fmt.Errorf("%d of %d resource change(s) failed", countFailed(res), len(res.Results))
	}
	return nil
}

// jsonProblem says what is wrong with a JSON argument in the user's terms
// (encoding/json's own messages name Go types).
func jsonProblem(err error) string {
	var syn *json.SyntaxError
	var typ *json.UnmarshalTypeError
	switch {
	case errors.As(err, &syn):
		return fmt.Sprintf("not valid JSON at byte %d", syn.Offset)
	case errors.As(err, &typ) && typ.Field != "":
		return fmt.Sprintf("%s must not be a JSON %s", typ.Field, typ.Value)
	case errors.As(err, &typ):
		return fmt.Sprintf("got a JSON %s", typ.Value)
	}
	return "not valid JSON"
}

func countFailed(r *jobs.AutoResourceResult) int {
	n := 0
	for _, it := range r.Results {
		if !it.Success {
			n++
		}
	}
	return n
}

// resourceJob wires a job environment and the auto_resource defaults from
// the configuration, a call's include_images winning over it.
func (a *App) resourceJob(ctx context.Context, includeImages *bool, lang string) (*jobs.Env, jobs.AutoResourceRequest, error) {
	cfg, err := a.Config()
	if err != nil {
		return nil, jobs.AutoResourceRequest{}, err
	}
	env, err := a.jobEnv(ctx)
	if err != nil {
		return nil, jobs.AutoResourceRequest{}, err
	}
	req := jobs.AutoResourceRequest{IncludeImages: cfg.Resource.IncludeImages, Language: lang,
		MaxFileBytes: cfg.MaxFileBytes, Images: cfg.Images.Vision()}
	if includeImages != nil {
		req.IncludeImages = *includeImages
	}
	return env, req, nil
}
