package rulechange

import (
	"context"
	"fmt"
	"log/slog"
	"strings"

	nacoslog "github.com/nacos-group/nacos-sdk-go/v2/common/logger"
	goredis "github.com/redis/go-redis/v9"
	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"
)

// The config center clients' own log lines go to Options.Logger at Debug
// (discarded when it is nil), each with the client's name: a person sees
// them with the CLI's -v, and never mixed into its output otherwise.
// go-redis and the Nacos SDK log through process-wide loggers: the Logger
// of the latest Open that uses them, so a process that opens centers with
// different loggers should give them the same one. gRPC's (under etcd) is
// left alone: it may only be set before gRPC runs, and prints errors only.

// logTo returns logger, or one that discards.
func logTo(logger *slog.Logger) *slog.Logger {
	if logger == nil {
		return slog.New(slog.DiscardHandler)
	}
	return logger
}

// clientLog is a client's log lines as slog Debug records.
type clientLog struct {
	l      *slog.Logger
	client string
}

func (c clientLog) line(s string) {
	c.l.Debug(strings.TrimSpace(s), "client", c.client)
}

// Printf is go-zookeeper's Logger.
func (c clientLog) Printf(format string, args ...any) { c.line(fmt.Sprintf(format, args...)) }

// redisLog is go-redis's internal.Logging.
type redisLog struct{ clientLog }

func (r redisLog) Printf(_ context.Context, format string, args ...any) {
	r.line(fmt.Sprintf(format, args...))
}

// Write takes a log writer's lines (zap's).
func (c clientLog) Write(p []byte) (int, error) {
	for l := range strings.Lines(string(p)) {
		if l = strings.TrimSpace(l); l != "" {
			c.line(l)
		}
	}
	return len(p), nil
}

// nacosLog is the Nacos SDK's Logger.
type nacosLog struct{ clientLog }

func (n nacosLog) Info(args ...any)                  { n.line(fmt.Sprint(args...)) }
func (n nacosLog) Warn(args ...any)                  { n.line(fmt.Sprint(args...)) }
func (n nacosLog) Error(args ...any)                 { n.line(fmt.Sprint(args...)) }
func (n nacosLog) Debug(args ...any)                 { n.line(fmt.Sprint(args...)) }
func (n nacosLog) Infof(format string, args ...any)  { n.line(fmt.Sprintf(format, args...)) }
func (n nacosLog) Warnf(format string, args ...any)  { n.line(fmt.Sprintf(format, args...)) }
func (n nacosLog) Errorf(format string, args ...any) { n.line(fmt.Sprintf(format, args...)) }
func (n nacosLog) Debugf(format string, args ...any) { n.line(fmt.Sprintf(format, args...)) }

// zapTo is a zap logger writing to logger (etcd's client).
func zapTo(logger *slog.Logger) *zap.Logger {
	if logger == nil {
		return zap.NewNop()
	}
	enc := zapcore.NewConsoleEncoder(zapcore.EncoderConfig{MessageKey: "msg", LevelKey: "level", EncodeLevel: zapcore.LowercaseLevelEncoder})
	return zap.New(zapcore.NewCore(enc, zapcore.AddSync(clientLog{logger, "etcd"}), zap.DebugLevel))
}

// routeGlobal points the process-wide client loggers of scheme at logger.
func routeGlobal(scheme string, logger *slog.Logger) {
	l := logTo(logger)
	switch scheme {
	case "redis":
		goredis.SetLogger(redisLog{clientLog{l, "redis"}})
	case "nacos":
		nacoslog.SetLogger(nacosLog{clientLog{l, "nacos"}})
	}
}
