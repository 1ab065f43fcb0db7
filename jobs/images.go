package jobs

import (
	"context"
	"encoding/base64"
	"encoding/hex"
	"fmt"
	"net/url"
	"os"
	"strings"

	"github.com/reme-dev/reme/jobs/llm"
	"github.com/reme-dev/reme/store"
	"github.com/reme-dev/reme/vision"
)

// Images in conversations (auto_memory include_images=true): base64 images
// are saved under session/images/<sid>/, http(s) URLs are kept as they are
// (never downloaded), and each image reaches the model next to its exact
// source, which the card then cites and lists in source_images.

// DefaultMaxImages is how many images one auto_memory call may carry.
const DefaultMaxImages = 5

// convImage is one image block of a conversation.
type convImage struct {
	msgID     string
	block     int    // index in the message's content list
	source    string // what cites it: "[[session/images/…]]" or the URL
	rel       string // saved copy, for base64 images
	data      []byte // decoded bytes, for base64 images
	url       string // for URL images
	mediaType string
}

func (c convImage) key() string { return fmt.Sprintf("%s#%d", c.msgID, c.block) }

// collectImages finds and validates every image block before anything is
// written: the count, the URL scheme, the base64 payload, the target path.
func collectImages(env *Env, sid string, msgs []store.Message, max int) ([]convImage, error) {
	if max <= 0 {
		max = DefaultMaxImages
	}
	var out []convImage
	for _, m := range msgs {
		for i, b := range m.Blocks() {
			if (b.Type != "data" && b.Type != "image") || b.Source == nil {
				continue
			}
			mt := b.Source.MediaType
			if mt != "" && !strings.HasPrefix(mt, "image/") {
				continue // audio, video: not images
			}
			img := convImage{msgID: m.ID, block: i, mediaType: mt}
			switch b.Source.Type {
			case "base64":
				data, err := base64.StdEncoding.DecodeString(strings.TrimSpace(b.Source.Data))
				if err != nil {
					return nil, inputErr("message %s block %d: image data is not valid base64: %v", m.ID, i, err)
				}
				if sniffed, err := vision.Sniff(data); err == nil {
					img.mediaType = sniffed
				} else if !strings.HasPrefix(mt, "image/") {
					return nil, inputErr("message %s block %d: not an image (%v)", m.ID, i, err)
				}
				name := fmt.Sprintf("msg-%s-image-%d%s", hex.EncodeToString([]byte(m.ID)), i, vision.ExtensionFor(img.mediaType))
				rel, err := env.WS.Rel(store.SessionDir + "/images/" + sid + "/" + name)
				if err != nil {
					return nil, inputErr("message %s block %d: %v", m.ID, i, err)
				}
				if err := store.ValidateLinkTarget(rel); err != nil {
					return nil, inputErr("message %s block %d: the image path cannot be linked: %v", m.ID, i, err)
				}
				if fi, err := os.Lstat(env.WS.Abs(rel)); err == nil && !fi.Mode().IsRegular() {
					return nil, inputErr("%s exists and is not a regular file", rel)
				}
				img.rel, img.data, img.source = rel, data, store.LinkTo(rel)
			case "url":
				u, err := url.Parse(strings.TrimSpace(b.Source.URL))
				if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
					return nil, inputErr("message %s block %d: image URL %q is refused: only http and https URLs are accepted (they are not downloaded; send local files as base64)", m.ID, i, b.Source.URL)
				}
				// the model is sent the URL; the card cites it masked (a
				// password in it, a signed URL's signature)
				img.url = u.String()
				img.source, _ = store.RedactSecrets(img.url)
			default:
				return nil, inputErr("message %s block %d: image source type %q is not base64 or url", m.ID, i, b.Source.Type)
			}
			out = append(out, img)
		}
	}
	if len(out) > max {
		return nil, inputErr("the conversation carries %d images; at most %d are allowed per call (auto_memory.max_image_num)", len(out), max)
	}
	return out, nil
}

// saveImages writes the base64 images; an existing file is reused as it is.
func saveImages(env *Env, imgs []convImage) error {
	for _, img := range imgs {
		if img.rel == "" || env.WS.Exists(img.rel) {
			continue
		}
		if err := env.WS.WriteFile(img.rel, img.data); err != nil {
			return err
		}
	}
	return nil
}

// describeImages shows the vision model every image beside its source and
// returns a description per image, keyed by message id and block.
func describeImages(ctx context.Context, env *Env, imgs []convImage, limits vision.Options, msgs []store.Message, sessionFile, lang string) (map[string]string, error) {
	type promptImage struct{ Source string }
	var list []promptImage
	parts := []llm.Part{{}}
	for _, img := range imgs {
		list = append(list, promptImage{img.source})
		parts = append(parts, llm.Part{Text: "Image source: " + img.source})
		if img.url != "" {
			parts = append(parts, llm.Part{ImageURL: img.url})
			continue
		}
		prepared, err := vision.Prepare(img.data, limits)
		if err != nil {
			return nil, fmt.Errorf("image %s: %w", img.source, err)
		}
		parts = append(parts, llm.Part{ImageURL: prepared.DataURL()})
	}
	text, err := renderPrompt("describe_images", lang, "user", map[string]any{
		"Images": list, "History": formatHistory(msgs, sessionFile, env.loc(), nil),
	})
	if err != nil {
		return nil, err
	}
	parts[0].Text = text
	resp, err := env.model().Chat(ctx, llm.Request{Model: env.VisionModelID, Messages: []llm.Message{{Role: llm.RoleUser, Parts: parts}}})
	if err != nil {
		return nil, err
	}
	var bySource map[string]string
	if err := decodeJSONReply(resp.Message.Text(), &bySource); err != nil {
		return nil, fmt.Errorf("the image descriptions are not usable: %v", err)
	}
	out := map[string]string{}
	for _, img := range imgs {
		d := strings.TrimSpace(bySource[img.source])
		if d == "" {
			return nil, fmt.Errorf("the image descriptions miss %s", img.source)
		}
		out[img.key()] = d
	}
	return out, nil
}

// sourceImages is the card's source_images list with this call's image
// sources added, de-duplicated, in order; an existing value that is not a
// list is an error (the card is not rewritten).
func sourceImages(env *Env, card string, imgs []convImage) ([]string, error) {
	var list []string
	if card != "" {
		n, err := env.WS.ReadNote(card)
		if err != nil {
			return nil, err
		}
		if n.FM.Has("source_images") && !n.FM.IsList("source_images") {
			return nil, fmt.Errorf("%s: source_images must be a list of strings", card)
		}
		list = n.FM.Strings("source_images")
	}
	seen := map[string]bool{}
	for _, s := range list {
		seen[s] = true
	}
	for _, img := range imgs {
		if !seen[img.source] {
			seen[img.source] = true
			list = append(list, img.source)
		}
	}
	return list, nil
}
