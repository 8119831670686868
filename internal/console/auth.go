package console

import (
	"bufio"
	"bytes"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"time"

	"golang.org/x/crypto/bcrypt"
	"golang.org/x/time/rate"
)

// The roles: a viewer sees everything, an editor also changes rules.
const (
	RoleViewer = "viewer"
	RoleEditor = "editor"
)

// validName is what a user name may be.
var validName = regexp.MustCompile(`^[A-Za-z0-9._@-]{1,64}$`)

// MinPassword is the shortest password SetUser accepts.
const MinPassword = 8

// user is one line of the users file: NAME:ROLE:BCRYPT-HASH. A hash of
// "-" lets nobody sign in with a password under that name: it gives a
// role to a name that comes through the trusted proxy header.
type user struct {
	name, role string
	hash       []byte
}

// readUsers reads the users file. A missing file has no users.
func readUsers(path string) (map[string]user, error) {
	data, err := os.ReadFile(path)
	if errors.Is(err, os.ErrNotExist) {
		return map[string]user{}, nil
	}
	if err != nil {
		return nil, fmt.Errorf("console: users file: %w", err)
	}
	users := map[string]user{}
	sc := bufio.NewScanner(bytes.NewReader(data))
	for n := 1; sc.Scan(); n++ {
		line := strings.TrimSpace(sc.Text())
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		parts := strings.SplitN(line, ":", 3)
		if len(parts) != 3 || !validName.MatchString(parts[0]) || (parts[1] != RoleViewer && parts[1] != RoleEditor) {
			return nil, fmt.Errorf("console: users file %s line %d: want NAME:viewer|editor:HASH", path, n)
		}
		users[parts[0]] = user{name: parts[0], role: parts[1], hash: []byte(parts[2])}
	}
	return users, sc.Err()
}

// SetUser adds name to the users file at path, or changes its role and
// password: the password is stored as a bcrypt hash, the file is
// replaced atomically and readable by its owner only. An empty password
// stores "-": the name then signs in only through the trusted header.
func SetUser(path, name, role string, password []byte) error {
	if !validName.MatchString(name) {
		return fmt.Errorf("console: user name %q: want 1 to 64 letters, digits, '.', '_', '@' or '-'", name)
	}
	if role != RoleViewer && role != RoleEditor {
		return fmt.Errorf("console: role %q: want %s or %s", role, RoleViewer, RoleEditor)
	}
	hash := []byte("-")
	if len(password) > 0 {
		if len(password) < MinPassword {
			return fmt.Errorf("console: password: want at least %d characters", MinPassword)
		}
		var err error
		if hash, err = bcrypt.GenerateFromPassword(password, bcrypt.DefaultCost); err != nil {
			return fmt.Errorf("console: password: %w", err)
		}
	}
	users, err := readUsers(path)
	if err != nil {
		return err
	}
	users[name] = user{name: name, role: role, hash: hash}
	var buf bytes.Buffer
	buf.WriteString("# bulwark console users: NAME:ROLE:BCRYPT-HASH (bulwark console passwd)\n")
	for _, n := range sortedKeys(users) {
		u := users[n]
		fmt.Fprintf(&buf, "%s:%s:%s\n", u.name, u.role, u.hash)
	}
	tmp, err := os.CreateTemp(filepath.Dir(path), ".users-*")
	if err != nil {
		return fmt.Errorf("console: users file: %w", err)
	}
	defer os.Remove(tmp.Name())
	if _, err := tmp.Write(buf.Bytes()); err != nil {
		_ = tmp.Close()
		return fmt.Errorf("console: users file: %w", err)
	}
	if err := tmp.Close(); err != nil {
		return fmt.Errorf("console: users file: %w", err)
	}
	if err := os.Chmod(tmp.Name(), 0o600); err != nil {
		return fmt.Errorf("console: users file: %w", err)
	}
	if err := os.Rename(tmp.Name(), path); err != nil {
		return fmt.Errorf("console: users file: %w", err)
	}
	return nil
}

// Sign-in limits: per client address and per user name, a burst of
// signInBurst attempts, then one every signInEvery.
const (
	signInBurst   = 5
	signInEvery   = 10 * time.Second
	sessionTTL    = 12 * time.Hour
	cookieName    = "bulwark_console"
	csrfHeader    = "X-CSRF-Token"
	maxLimiters   = 4096
	maxSignInBody = 4 << 10
)

// who is the signed-in user of a request.
type who struct {
	Name string `json:"name"`
	Role string `json:"role"`
	CSRF string `json:"csrf"`
	// Via says how: "password" or "header".
	Via string `json:"via"`
}

func (w who) canEdit() bool { return w.Role == RoleEditor }

type session struct {
	who
	expires time.Time
}

// auth signs users in and tells who a request is.
type auth struct {
	usersPath string
	header    string // the trusted proxy's header naming the user; "" for none
	key       []byte // signs the CSRF tokens of header users
	now       func() time.Time

	mu       sync.Mutex
	sessions map[string]*session
	limiters map[string]*rate.Limiter
}

// dummyHash is compared when the name is unknown, so that the time an
// answer takes tells nothing: the hash, at bcrypt.DefaultCost, of random
// bytes nobody kept.
var dummyHash = []byte("$2a$10$cWu41w1WW8r3xU0i8unW..y./5Ko5zvpkTx1p1xBaam0LaGVL0e5C")

func newAuth(usersPath, header string, now func() time.Time) *auth {
	return &auth{usersPath: usersPath, header: header, now: now, key: randomBytes(32),
		sessions: map[string]*session{}, limiters: map[string]*rate.Limiter{}}
}

func randomBytes(n int) []byte {
	b := make([]byte, n)
	_, _ = rand.Read(b) // never fails (crypto/rand)
	return b
}

func randomToken() string { return base64.RawURLEncoding.EncodeToString(randomBytes(32)) }

// whoIs returns the user of r: the trusted header's, else the session
// cookie's.
func (a *auth) whoIs(r *http.Request) (who, bool) {
	if a.header != "" {
		if name := strings.TrimSpace(r.Header.Get(a.header)); name != "" {
			if !validName.MatchString(name) {
				return who{}, false
			}
			role := RoleViewer
			if users, err := readUsers(a.usersPath); err == nil {
				if u, ok := users[name]; ok {
					role = u.role
				}
			}
			return who{Name: name, Role: role, CSRF: a.headerCSRF(name, role), Via: "header"}, true
		}
	}
	c, err := r.Cookie(cookieName)
	if err != nil {
		return who{}, false
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	s, ok := a.sessions[c.Value]
	if !ok {
		return who{}, false
	}
	if a.now().After(s.expires) {
		delete(a.sessions, c.Value)
		return who{}, false
	}
	return s.who, true
}

// headerCSRF is the CSRF token of a user who comes through the header:
// no session holds it, so it is a MAC of the name and role.
func (a *auth) headerCSRF(name, role string) string {
	m := hmac.New(sha256.New, a.key)
	m.Write([]byte(name + "\x00" + role))
	return base64.RawURLEncoding.EncodeToString(m.Sum(nil))
}

// allow spends one sign-in attempt of key.
func (a *auth) allow(key string) bool {
	a.mu.Lock()
	defer a.mu.Unlock()
	l, ok := a.limiters[key]
	if !ok {
		if len(a.limiters) >= maxLimiters {
			a.pruneLimiters()
		}
		l = rate.NewLimiter(rate.Every(signInEvery), signInBurst)
		a.limiters[key] = l
	}
	return l.AllowN(a.now(), 1)
}

// pruneLimiters drops the limiters that are full again (they would allow
// a burst anyway) and the expired sessions. Called with a.mu held.
func (a *auth) pruneLimiters() {
	now := a.now()
	for k, l := range a.limiters {
		if l.TokensAt(now) >= signInBurst {
			delete(a.limiters, k)
		}
	}
	for k, s := range a.sessions {
		if now.After(s.expires) {
			delete(a.sessions, k)
		}
	}
}

// clientAddr is the address a sign-in is limited by.
func clientAddr(r *http.Request) string {
	host, _, err := net.SplitHostPort(r.RemoteAddr)
	if err != nil {
		return r.RemoteAddr
	}
	return host
}

// signIn checks a name and password (JSON {"name","password"}) and starts
// a session.
func (a *auth) signIn(w http.ResponseWriter, r *http.Request) {
	// JSON only: a form on another site cannot send it (no signing a
	// victim in as the attacker).
	if ct := r.Header.Get("Content-Type"); !strings.HasPrefix(ct, "application/json") {
		writeError(w, http.StatusUnsupportedMediaType, "want Content-Type application/json")
		return
	}
	var in struct {
		Name     string `json:"name"`
		Password string `json:"password"`
	}
	if err := json.NewDecoder(http.MaxBytesReader(w, r.Body, maxSignInBody)).Decode(&in); err != nil {
		writeError(w, http.StatusBadRequest, "sign in: want JSON {\"name\", \"password\"}")
		return
	}
	if !a.allow("addr:"+clientAddr(r)) || !a.allow("name:"+in.Name) {
		w.Header().Set("Retry-After", fmt.Sprint(int(signInEvery.Seconds())))
		writeError(w, http.StatusTooManyRequests, "too many sign-in attempts: wait and try again")
		return
	}
	users, err := readUsers(a.usersPath)
	if err != nil {
		writeError(w, http.StatusInternalServerError, err.Error())
		return
	}
	u, known := users[in.Name]
	hash := dummyHash
	if known && string(u.hash) != "-" {
		hash = u.hash
	}
	if bcrypt.CompareHashAndPassword(hash, []byte(in.Password)) != nil || !known || string(u.hash) == "-" {
		writeError(w, http.StatusUnauthorized, "wrong name or password")
		return
	}
	s := &session{who: who{Name: u.name, Role: u.role, CSRF: randomToken(), Via: "password"}, expires: a.now().Add(sessionTTL)}
	id := randomToken()
	a.mu.Lock()
	a.sessions[id] = s
	a.mu.Unlock()
	http.SetCookie(w, &http.Cookie{Name: cookieName, Value: id, Path: "/", HttpOnly: true, SameSite: http.SameSiteStrictMode,
		Secure: r.TLS != nil, MaxAge: int(sessionTTL.Seconds())})
	writeJSON(w, http.StatusOK, s.who)
}

// signOut ends the session of r (the caller checked its CSRF token).
func (a *auth) signOut(w http.ResponseWriter, r *http.Request) {
	if c, err := r.Cookie(cookieName); err == nil {
		a.mu.Lock()
		delete(a.sessions, c.Value)
		a.mu.Unlock()
	}
	http.SetCookie(w, &http.Cookie{Name: cookieName, Value: "", Path: "/", HttpOnly: true, SameSite: http.SameSiteStrictMode,
		Secure: r.TLS != nil, MaxAge: -1})
	writeJSON(w, http.StatusOK, map[string]bool{"signedOut": true})
}

// checkWrite says whether r may write: a signed-in editor whose request
// carries the session's CSRF token and a JSON body. It answers the
// refusal itself and returns false.
func (a *auth) checkWrite(w http.ResponseWriter, r *http.Request, needEditor bool) (who, bool) {
	u, ok := a.whoIs(r)
	if !ok {
		writeError(w, http.StatusUnauthorized, "sign in first")
		return who{}, false
	}
	tok := r.Header.Get(csrfHeader)
	if tok == "" || subtle.ConstantTimeCompare([]byte(tok), []byte(u.CSRF)) != 1 {
		writeError(w, http.StatusForbidden, "missing or wrong CSRF token ("+csrfHeader+"): reload the page")
		return who{}, false
	}
	if ct := r.Header.Get("Content-Type"); !strings.HasPrefix(ct, "application/json") {
		writeError(w, http.StatusUnsupportedMediaType, "want Content-Type application/json")
		return who{}, false
	}
	if needEditor && !u.canEdit() {
		writeError(w, http.StatusForbidden, u.Name+" is a "+u.Role+": changing rules needs the editor role")
		return who{}, false
	}
	return u, true
}
