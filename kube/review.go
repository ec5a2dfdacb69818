package kube

import (
	"context"
	"encoding/json"
	"fmt"

	authnv1 "k8s.io/api/authentication/v1"
	authzv1 "k8s.io/api/authorization/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// TokenReview and SubjectAccessReview are plain POSTs of JSON: registering their API groups in the
// scheme would cost the agent what the core/v1-only client saves.

// ReviewToken asks the API server who a bearer token belongs to (authentication.k8s.io/v1 TokenReview).
func (c *Client) ReviewToken(ctx context.Context, token string) (authnv1.TokenReviewStatus, error) {
	in := authnv1.TokenReview{TypeMeta: metav1.TypeMeta{APIVersion: "authentication.k8s.io/v1", Kind: "TokenReview"},
		Spec: authnv1.TokenReviewSpec{Token: token}}
	var out authnv1.TokenReview
	if err := c.post(ctx, "/apis/authentication.k8s.io/v1/tokenreviews", in, &out); err != nil {
		return authnv1.TokenReviewStatus{}, fmt.Errorf("TokenReview: %w", err)
	}
	return out.Status, nil
}

// CanAccessPath asks the API server whether user may use verb on a non-resource URL such as
// /metrics (authorization.k8s.io/v1 SubjectAccessReview).
func (c *Client) CanAccessPath(ctx context.Context, user authnv1.UserInfo, verb, path string) (bool, string, error) {
	extra := map[string]authzv1.ExtraValue{}
	for k, v := range user.Extra {
		extra[k] = authzv1.ExtraValue(v)
	}
	in := authzv1.SubjectAccessReview{TypeMeta: metav1.TypeMeta{APIVersion: "authorization.k8s.io/v1", Kind: "SubjectAccessReview"},
		Spec: authzv1.SubjectAccessReviewSpec{User: user.Username, UID: user.UID, Groups: user.Groups, Extra: extra,
			NonResourceAttributes: &authzv1.NonResourceAttributes{Path: path, Verb: verb}}}
	var out authzv1.SubjectAccessReview
	if err := c.post(ctx, "/apis/authorization.k8s.io/v1/subjectaccessreviews", in, &out); err != nil {
		return false, "", fmt.Errorf("SubjectAccessReview: %w", err)
	}
	if out.Status.EvaluationError != "" && !out.Status.Allowed {
		return false, out.Status.EvaluationError, nil
	}
	return out.Status.Allowed && !out.Status.Denied, out.Status.Reason, nil
}

func (c *Client) post(ctx context.Context, path string, in, out any) error {
	body, err := json.Marshal(in)
	if err != nil {
		return err
	}
	raw, err := c.rest.Post().AbsPath(path).SetHeader("Content-Type", "application/json").Body(body).Do(ctx).Raw()
	if err != nil {
		return err
	}
	return json.Unmarshal(raw, out)
}
