package methods

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"sort"
	"strconv"
	"strings"
	"sync"
	"unicode"
)

// factory builds a method from its settings (a decoded YAML or JSON object; nil for the defaults).
type factory func(settings map[string]any) (Method, error)

// Configured is implemented by methods that can show their resolved settings (defaults applied), which
// the runner writes into the run's resolved config.
type Configured interface {
	Settings() any
}

var (
	regMu     sync.RWMutex
	factories = map[string]factory{}
)

// Register makes a method available by name. Its settings, of type C (a struct with json tags), start
// from defaults(); a cell's settings are decoded strictly over them (DecodeSettings: a key C lacks is
// an error naming it) and, when C has a Validate() error method, validated, then checked against
// their `min:"N"` tags (checkMin); build then makes the method. Register panics on a duplicate or
// empty name (a programming error found at init).
func Register[C any](name string, defaults func() C, build func(C) (Method, error)) {
	if defaults == nil || build == nil {
		panic("methods: Register " + name + " with a nil defaults or build")
	}
	register(name, func(settings map[string]any) (Method, error) {
		c := defaults()
		if err := DecodeSettings(settings, &c); err != nil {
			return nil, err
		}
		if v, ok := any(&c).(interface{ Validate() error }); ok {
			if err := v.Validate(); err != nil {
				return nil, err
			}
		}
		if err := checkMin(reflect.ValueOf(c)); err != nil {
			return nil, err
		}
		return build(c)
	})
}

// checkMin returns the error of the first whole-number field of the struct v, embedded structs
// included, whose tag `min:"N"` it is below: "KEY V: want at least N", KEY its json name.
func checkMin(v reflect.Value) error {
	if v.Kind() != reflect.Struct {
		return nil
	}
	for i := 0; i < v.NumField(); i++ {
		f, fv := v.Type().Field(i), v.Field(i)
		if f.Anonymous {
			if err := checkMin(fv); err != nil {
				return err
			}
			continue
		}
		tag, ok := f.Tag.Lookup("min")
		if !ok || !fv.CanInt() {
			continue
		}
		if lo, err := strconv.ParseInt(tag, 10, 64); err != nil {
			panic("methods: bad min tag on " + f.Name + ": " + tag)
		} else if fv.Int() < lo {
			key, _, _ := strings.Cut(f.Tag.Get("json"), ",")
			return fmt.Errorf("%s %d: want at least %d", key, fv.Int(), lo)
		}
	}
	return nil
}

func register(name string, f factory) {
	regMu.Lock()
	defer regMu.Unlock()
	if name == "" {
		panic("methods: Register with an empty name")
	}
	if _, dup := factories[name]; dup {
		panic("methods: duplicate method " + name)
	}
	factories[name] = f
}

// Names returns the registered method names, sorted.
func Names() []string {
	regMu.RLock()
	defer regMu.RUnlock()
	out := make([]string, 0, len(factories))
	for n := range factories {
		out = append(out, n)
	}
	sort.Strings(out)
	return out
}

// New builds the method registered as name from settings.
func New(name string, settings map[string]any) (Method, error) {
	regMu.RLock()
	f, ok := factories[name]
	regMu.RUnlock()
	if !ok {
		return nil, fmt.Errorf("unknown method %q (have %s)", name, strings.Join(Names(), ", "))
	}
	m, err := f(settings)
	if err != nil {
		return nil, fmt.Errorf("method %s: %w", name, err)
	}
	return m, nil
}

// SettingError is a setting a method does not have, or one of the wrong kind of value; Key names it
// (dotted for a nested field), so that a config file's error can point at its line.
type SettingError struct {
	Key string
	Msg string
}

func (e *SettingError) Error() string { return e.Msg }

// DecodeSettings decodes settings into dst (a pointer to a config struct with json tags), rejecting
// keys dst does not have with an error that names the key.
func DecodeSettings(settings map[string]any, dst any) error {
	if len(settings) == 0 {
		return nil
	}
	data, err := json.Marshal(settings)
	if err != nil {
		return fmt.Errorf("settings: %w", err)
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(dst); err != nil {
		msg := err.Error()
		if k, ok := strings.CutPrefix(msg, "json: unknown field "); ok {
			key, uerr := strconv.Unquote(k)
			if uerr != nil {
				key = k
			}
			return &SettingError{Key: key, Msg: fmt.Sprintf("unknown setting %s", k)}
		}
		var te *json.UnmarshalTypeError
		if errors.As(err, &te) && te.Field != "" {
			key := settingKey(te.Field)
			return &SettingError{Key: key, Msg: fmt.Sprintf("setting %s: got %s, want %s", key, jsonKind(te.Value), typeWords(te.Type))}
		}
		return fmt.Errorf("settings: %s", strings.TrimPrefix(msg, "json: "))
	}
	return nil
}

// settingKey is the setting's key in a json.UnmarshalTypeError's Field: without the Go names of the
// embedded structs it passes through ("GenerationConfig.shots" is "shots").
func settingKey(field string) string {
	var keep []string
	for _, p := range strings.Split(field, ".") {
		if p != "" && !unicode.IsUpper(rune(p[0])) {
			keep = append(keep, p)
		}
	}
	if len(keep) == 0 {
		return field
	}
	return strings.Join(keep, ".")
}

// jsonKind names a JSON value kind (json.UnmarshalTypeError.Value) in a config's words.
func jsonKind(v string) string {
	switch {
	case v == "string":
		return "text"
	case v == "array":
		return "a list"
	case v == "object":
		return "a mapping"
	case v == "bool":
		return "true or false"
	case strings.HasPrefix(v, "number"):
		return "a number"
	}
	return v
}

// typeWords names the value a Go type holds in a config's words, not Go's.
func typeWords(t reflect.Type) string {
	switch t.Kind() {
	case reflect.Float32, reflect.Float64:
		return "a number"
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64, reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		return "a whole number"
	case reflect.String:
		return "text"
	case reflect.Bool:
		return "true or false"
	case reflect.Slice, reflect.Array:
		return "a list"
	case reflect.Map, reflect.Struct:
		return "a mapping"
	case reflect.Pointer:
		return typeWords(t.Elem())
	}
	return "another kind of value"
}
