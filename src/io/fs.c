/*
 * fs.c — local file-system primitives for the commit protocol: mkdir -p,
 * bounded whole-file reads, durable exclusive writes, atomic replace,
 * exclusive publish through link(2), directory fsync, listing and UUIDs.
 *
 * Why link(2) for the exclusive publish: rename(2) silently replaces an
 * existing target, and O_EXCL on the final name would expose a partially
 * written file to readers. Writing a private temporary and linking it to
 * the final name gives both properties at once: the name appears with the
 * complete, fsynced content, and only for the first writer (EEXIST for the
 * others). link(2) is atomic on every local POSIX file system.
 */
#include "fs.h"
#include "fs_sync.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <unistd.h>

/* Directory part of `path` into `out` ("." when there is none). */
static bool dir_of(const char *path, char *out, size_t cap) {
  const char *slash = strrchr(path, '/');
  if (slash == NULL) {
    if (cap < 2) return false;
    strcpy(out, ".");
    return true;
  }
  size_t n = slash == path ? 1 : (size_t)(slash - path);
  if (n + 1 > cap) return false;
  memcpy(out, path, n);
  out[n] = '\0';
  return true;
}

/* A store URI handed to a local call would make a local "s3:" folder:
 * refused, naming the caller's mistake (store.h is for such locations). */
static hs_status not_local(const char *path, hs_error *err) {
  if (path == NULL || strncmp(path, "s3://", 5) != 0) return HS_OK;
  return hs_error_set(err, HS_ERR_INVALID_ARG,
                      "%s: an object-store location where a local path is needed (an operation "
                      "not yet on store.h)",
                      path);
}

hs_status hs_fs_fsync_dir(const char *path, hs_error *err) {
  int fd = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0) {
    return hs_error_set(err, HS_ERR_IO, "%s: cannot open directory: %s", path, strerror(errno));
  }
  hs_status st = HS_OK;
  if (fsync(fd) != 0 && errno != EINVAL) {
    st = hs_error_set(err, HS_ERR_IO, "%s: fsync of directory failed: %s", path, strerror(errno));
  }
  close(fd);
  return st;
}

static hs_status fsync_parent(const char *path, hs_error *err) {
  char dir[4096];
  if (!dir_of(path, dir, sizeof dir)) {
    return hs_error_set(err, HS_ERR_INVALID_ARG, "%s: path too long", path);
  }
  return hs_fs_fsync_dir(dir, err);
}

hs_status hs_fs_mkdirs(const char *path, hs_error *err) {
  if (not_local(path, err) != HS_OK) return HS_ERR_INVALID_ARG;
  size_t n = strlen(path);
  if (n == 0 || n >= 4096) {
    return hs_error_set(err, HS_ERR_INVALID_ARG, "mkdirs: bad path length %zu", n);
  }
  char buf[4096];
  memcpy(buf, path, n + 1);
  while (n > 1 && buf[n - 1] == '/') buf[--n] = '\0';
  /* Walk each prefix ending before a '/', then the whole path. */
  for (size_t i = 1; i <= n; i++) {
    if (i < n && buf[i] != '/') continue;
    char saved = buf[i];
    buf[i] = '\0';
    if (mkdir(buf, 0755) == 0) {
      hs_status st = fsync_parent(buf, err);
      if (st != HS_OK) return st;
    } else if (errno == EEXIST) {
      struct stat sb;
      if (stat(buf, &sb) != 0 || !S_ISDIR(sb.st_mode)) {
        return hs_error_set(err, HS_ERR_IO, "%s: exists and is not a directory", buf);
      }
    } else {
      return hs_error_set(err, HS_ERR_IO, "%s: cannot create directory: %s", buf, strerror(errno));
    }
    buf[i] = saved;
  }
  return HS_OK;
}

/* ------------------------------------------------------- path errors */

/* `path` for a message: whole when short, else its head and tail (a
 * message holds HS_ERROR_MESSAGE_MAX bytes and must keep its reason). */
static const char *path_for_message(const char *path, char *buf, size_t cap) {
  size_t n = strlen(path);
  if (n <= 600 || cap < 300) return path;
  snprintf(buf, cap, "%.200s...%s", path, path + n - 80);
  return buf;
}

/* The first prefix of `path` (up to a '/' or the whole path) that `stat`
 * finds to be no folder (ENOTDIR) or fails with ELOOP (ELOOP), into `out`.
 * For ENOTDIR, *kind is "a file" or "not a folder" wording. */
static bool bad_prefix(const char *path, int errnum, char *out, size_t cap, const char **kind) {
  size_t n = strlen(path);
  if (n == 0 || n >= cap) return false;
  memcpy(out, path, n + 1);
  for (size_t i = 1; i <= n; i++) {
    if (i < n && out[i] != '/') continue;
    char saved = out[i];
    out[i] = '\0';
    struct stat sb;
    int rc = stat(out, &sb);
    if (errnum == ENOTDIR && rc == 0 && !S_ISDIR(sb.st_mode) && i < n) {
      *kind = S_ISREG(sb.st_mode) ? "is a file, not a folder" : "is not a folder";
      return true;
    }
    if (errnum == ELOOP && rc != 0 && errno == ELOOP) {
      *kind = "is a symbolic link loop";
      return true;
    }
    if (rc != 0) return false;
    out[i] = saved;
  }
  return false;
}

hs_status hs_fs_path_error(hs_error *err, hs_status status, const char *path, const char *doing,
                           int errnum) {
  char shown[400];
  const char *p = path_for_message(path, shown, sizeof shown);
  if (errnum == ENAMETOOLONG) {
    for (const char *c = path; *c;) {
      while (*c == '/') c++;
      const char *e = c;
      while (*e && *e != '/') e++;
      size_t len = (size_t)(e - c);
      if (len > NAME_MAX) {
        return hs_error_set(
            err, status, "%s: %s: the name '%.*s%s' is too long (%zu bytes, the limit is %d)", p,
            doing, len > 300 ? 300 : (int)len, c, len > 300 ? "..." : "", len, (int)NAME_MAX);
      }
      c = e;
    }
    return hs_error_set(err, status, "%s: %s: the path is too long (%zu bytes, the limit is %d)", p,
                        doing, strlen(path), (int)PATH_MAX - 1);
  }
  if (errnum == ENOTDIR || errnum == ELOOP) {
    char prefix[PATH_MAX];
    const char *kind = NULL;
    if (bad_prefix(path, errnum, prefix, sizeof prefix, &kind)) {
      char shown2[400];
      return hs_error_set(err, status, "%s: %s: %s %s", p, doing,
                          path_for_message(prefix, shown2, sizeof shown2), kind);
    }
  }
  return hs_error_set(err, status, "%s: %s: %s", p, doing, strerror(errnum));
}

hs_status hs_fs_probe(const char *path, bool *exists, hs_error *err) {
  struct stat sb;
  *exists = false;
  if (lstat(path, &sb) == 0) {
    *exists = true;
    return HS_OK;
  }
  if (errno == ENOENT) return HS_OK;
  return hs_fs_path_error(err, HS_ERR_IO, path, "cannot look up", errno);
}

const char *hs_fs_kind_name(mode_t mode) {
  if (S_ISREG(mode)) return "a file";
  if (S_ISDIR(mode)) return "a folder";
  if (S_ISLNK(mode)) return "a symbolic link";
  if (S_ISFIFO(mode)) return "a FIFO";
  if (S_ISSOCK(mode)) return "a socket";
  if (S_ISCHR(mode) || S_ISBLK(mode)) return "a device";
  return "of an unknown type";
}

bool hs_fs_set_blocking(int fd) {
  /* F_SETFL sets only the status flags (O_APPEND, O_NONBLOCK, ...), of
   * which hs_fs_open_read set O_NONBLOCK alone: 0 clears it without an
   * F_GETFL. */
  return fcntl(fd, F_SETFL, 0) == 0;
}

hs_status hs_fs_open_read(const char *path, int *fd_out, struct stat *sb, hs_error *err) {
  *fd_out = -1;
  /* O_NONBLOCK: opening a FIFO would otherwise wait for a writer forever. */
  int fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
  if (fd < 0) {
    int e = errno;
    return hs_fs_path_error(err, e == ENOENT ? HS_ERR_NOT_FOUND : HS_ERR_IO, path, "cannot open",
                            e);
  }
  if (fstat(fd, sb) != 0) {
    hs_status st = hs_fs_path_error(err, HS_ERR_IO, path, "cannot stat", errno);
    close(fd);
    return st;
  }
  if (!S_ISREG(sb->st_mode)) {
    close(fd);
    return hs_error_set(err, HS_ERR_IO, "%s: not a regular file (%s)", path,
                        hs_fs_kind_name(sb->st_mode));
  }
  *fd_out = fd;
  return HS_OK;
}

hs_status hs_fs_read_file(const char *path, size_t max_bytes, hs_buf *out, hs_error *err) {
  int fd = -1;
  struct stat sb;
  hs_status st = hs_fs_open_read(path, &fd, &sb, err);
  if (st != HS_OK) return st;
  if ((uint64_t)sb.st_size > max_bytes) {
    st = hs_error_set(err, HS_ERR_CORRUPT, "%s: %lld bytes, more than the limit of %zu", path,
                      (long long)sb.st_size, max_bytes);
  } else if (!hs_buf_reserve(out, (size_t)sb.st_size + 1)) {
    st = hs_error_set(err, HS_ERR_NOMEM, "%s: out of memory", path);
  }
  /* Read until EOF (the file may change size; stay within max_bytes). */
  while (st == HS_OK) {
    if (!hs_buf_reserve(out, 4096)) {
      st = hs_error_set(err, HS_ERR_NOMEM, "%s: out of memory", path);
      break;
    }
    ssize_t r = read(fd, out->data + out->len, out->cap - out->len);
    if (r < 0 && errno == EINTR) continue;
    if (r < 0 && (errno == EAGAIN || errno == EWOULDBLOCK) && hs_fs_set_blocking(fd)) continue;
    if (r < 0) {
      st = hs_error_set(err, HS_ERR_IO, "%s: read failed: %s", path, strerror(errno));
      break;
    }
    if (r == 0) break;
    out->len += (size_t)r;
    if (out->len > max_bytes) {
      st = hs_error_set(err, HS_ERR_CORRUPT, "%s: more than the limit of %zu bytes", path,
                        max_bytes);
    }
  }
  close(fd);
  return st;
}

static bool stamp_from(const struct stat *sb, hs_fs_stamp *out) {
  if (!S_ISREG(sb->st_mode)) return false;
  *out = (hs_fs_stamp){(uint64_t)sb->st_dev, (uint64_t)sb->st_ino, (int64_t)sb->st_size,
                       (int64_t)sb->st_mtim.tv_sec * 1000000000 + sb->st_mtim.tv_nsec};
  return true;
}

bool hs_fs_stamp_of(const char *path, hs_fs_stamp *out) {
  struct stat sb;
  return stat(path, &sb) == 0 && stamp_from(&sb, out);
}

bool hs_fs_stamp_of_fd(int fd, hs_fs_stamp *out) {
  struct stat sb;
  return fstat(fd, &sb) == 0 && stamp_from(&sb, out);
}

bool hs_fs_stamp_equal(const hs_fs_stamp *a, const hs_fs_stamp *b) {
  return a->dev == b->dev && a->ino == b->ino && a->size == b->size && a->mtime_ns == b->mtime_ns;
}

bool hs_fs_exists(const char *path) {
  struct stat sb;
  return lstat(path, &sb) == 0 || errno != ENOENT;
}

static hs_status write_fd_all(int fd, const char *path, const uint8_t *p, size_t len,
                              hs_error *err) {
  while (len > 0) {
    ssize_t n = write(fd, p, len);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return hs_error_set(err, HS_ERR_IO, "%s: write failed: %s", path, strerror(errno));
    p += n;
    len -= (size_t)n;
  }
  /* The file is written whole before this and never grows afterwards, so
   * fdatasync suffices: it flushes the data and the size (metadata needed
   * to read the data back) and skips timestamps. */
  if (fdatasync(fd) != 0) {
    return hs_error_set(err, HS_ERR_IO, "%s: fdatasync failed: %s", path, strerror(errno));
  }
  return HS_OK;
}

/* Create `path` exclusively, write and fdatasync it (no directory fsync). */
static hs_status write_new(const char *path, const void *data, size_t len, hs_error *err) {
  int fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
  if (fd < 0) {
    return hs_error_set(err, HS_ERR_IO, "%s: cannot create: %s", path, strerror(errno));
  }
  hs_status st = write_fd_all(fd, path, data, len, err);
  if (close(fd) != 0 && st == HS_OK) {
    st = hs_error_set(err, HS_ERR_IO, "%s: close failed: %s", path, strerror(errno));
  }
  if (st != HS_OK) unlink(path);
  return st;
}

hs_status hs_fs_write_file(const char *path, const void *data, size_t len, hs_error *err) {
  if (not_local(path, err) != HS_OK) return HS_ERR_INVALID_ARG;
  char dir[4096];
  if (!dir_of(path, dir, sizeof dir))
    return hs_error_set(err, HS_ERR_INVALID_ARG, "%s: path too long", path);
  int fd = -1;
  hs_status st = hs_fs_create_unsynced(path, data, len, &fd, err);
  if (st != HS_OK) return st;
  /* The bytes and the entry naming them are made durable side by side
   * (one flush of the device's cache to wait for instead of two in a
   * row): nothing durable names the file before this returns, so their
   * order does not matter. */
  hs_fs_syncs *s = hs_fs_syncs_new();
  if (s == NULL) st = hs_error_set(err, HS_ERR_NOMEM, "%s: out of memory for its sync", path);
  if (st == HS_OK) st = hs_fs_syncs_add_file(s, fd, path, err);
  if (st == HS_OK) st = hs_fs_syncs_add_dir(s, dir, err);
  hs_status ws = s != NULL ? hs_fs_syncs_wait(s, st == HS_OK ? err : NULL) : HS_OK;
  if (st == HS_OK) st = ws;
  hs_fs_syncs_free(s);
  if (close(fd) != 0 && st == HS_OK)
    st = hs_error_set(err, HS_ERR_IO, "%s: close failed: %s", path, strerror(errno));
  if (st != HS_OK) unlink(path);
  return st;
}

hs_status hs_fs_create_file(const char *path, const void *data, size_t len, hs_error *err) {
  if (not_local(path, err) != HS_OK) return HS_ERR_INVALID_ARG;
  return write_new(path, data, len, err);
}

/* "<path>.tmp-<32 hex>": a unique sibling in the same directory. */
static hs_status temp_name(const char *path, char *out, size_t cap, hs_error *err) {
  uint8_t r[16];
  hs_status st = hs_fs_random_bytes(r, sizeof r, err);
  if (st != HS_OK) return st;
  const char *slash = strrchr(path, '/');
  size_t dir_len = slash ? (size_t)(slash - path) + 1 : 0;
  int n = snprintf(out, cap, "%.*s.tmp-", (int)dir_len, path);
  for (size_t i = 0; i < sizeof r && n > 0 && (size_t)n + 3 < cap; i++) {
    n += snprintf(out + n, cap - (size_t)n, "%02x", r[i]);
  }
  if (n < 0 || (size_t)n + 1 >= cap) {
    return hs_error_set(err, HS_ERR_INVALID_ARG, "%s: path too long", path);
  }
  return HS_OK;
}

hs_status hs_fs_replace_file(const char *path, const void *data, size_t len, hs_error *err) {
  if (not_local(path, err) != HS_OK) return HS_ERR_INVALID_ARG;
  char tmp[4200];
  hs_status st = temp_name(path, tmp, sizeof tmp, err);
  if (st != HS_OK) return st;
  if ((st = write_new(tmp, data, len, err)) != HS_OK) return st;
  if (rename(tmp, path) != 0) {
    st = hs_error_set(err, HS_ERR_IO, "%s: rename from %s failed: %s", path, tmp, strerror(errno));
    unlink(tmp);
    return st;
  }
  return fsync_parent(path, err);
}

hs_status hs_fs_replace_hint(const char *path, const void *data, size_t len, hs_error *err) {
  if (not_local(path, err) != HS_OK) return HS_ERR_INVALID_ARG;
  char tmp[4200];
  hs_status st = temp_name(path, tmp, sizeof tmp, err);
  if (st != HS_OK) return st;
  int fd = open(tmp, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
  if (fd < 0) return hs_error_set(err, HS_ERR_IO, "%s: cannot create: %s", tmp, strerror(errno));
  const uint8_t *p = data;
  size_t left = len;
  while (left > 0 && st == HS_OK) {
    ssize_t n = write(fd, p, left);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) {
      st = hs_error_set(err, HS_ERR_IO, "%s: write failed: %s", tmp, strerror(errno));
    } else {
      p += n;
      left -= (size_t)n;
    }
  }
  if (close(fd) != 0 && st == HS_OK) {
    st = hs_error_set(err, HS_ERR_IO, "%s: close failed: %s", tmp, strerror(errno));
  }
  /* Swap the names instead of renaming over the old hint: ext4 starts
   * writeback of a file renamed over another (auto_da_alloc), which cost
   * as much as an fsync per commit; an exchange does not. The old hint,
   * now at `tmp`, is removed. Without an old hint, or where the file
   * system has no exchange, a plain rename. */
  if (st == HS_OK) {
    if (renameat2(AT_FDCWD, tmp, AT_FDCWD, path, RENAME_EXCHANGE) != 0 && rename(tmp, path) != 0) {
      st =
          hs_error_set(err, HS_ERR_IO, "%s: rename from %s failed: %s", path, tmp, strerror(errno));
    }
  }
  unlink(tmp);
  return st;
}

hs_status hs_fs_create_unsynced(const char *path, const void *data, size_t len, int *fd_out,
                                hs_error *err) {
  if (not_local(path, err) != HS_OK) return HS_ERR_INVALID_ARG;
  *fd_out = -1;
  int fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
  if (fd < 0) {
    return hs_error_set(err, HS_ERR_IO, "%s: cannot create: %s", path, strerror(errno));
  }
  const uint8_t *p = data;
  while (len > 0) {
    ssize_t n = write(fd, p, len);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) {
      hs_status st = hs_error_set(err, HS_ERR_IO, "%s: write failed: %s", path, strerror(errno));
      close(fd);
      unlink(path);
      return st;
    }
    p += n;
    len -= (size_t)n;
  }
  *fd_out = fd;
  return HS_OK;
}

hs_status hs_fs_publish_prepare(const char *path, const void *data, size_t len, char *tmp,
                                size_t tmp_cap, int *fd_out, hs_error *err) {
  if (not_local(path, err) != HS_OK) return HS_ERR_INVALID_ARG;
  *fd_out = -1;
  hs_status st = temp_name(path, tmp, tmp_cap, err);
  if (st != HS_OK) return st;
  return hs_fs_create_unsynced(tmp, data, len, fd_out, err);
}

hs_status hs_fs_publish_link(const char *tmp, const char *path, bool *won, hs_error *err) {
  *won = false;
  int rc = link(tmp, path);
  int saved = errno;
  unlink(tmp);
  if (rc != 0) {
    if (saved == EEXIST) return HS_OK;
    return hs_error_set(err, HS_ERR_IO, "%s: cannot publish (link from %s): %s", path, tmp,
                        strerror(saved));
  }
  *won = true;
  return fsync_parent(path, err);
}

hs_status hs_fs_publish_exclusive(const char *path, const void *data, size_t len, bool *won,
                                  hs_error *err) {
  if (not_local(path, err) != HS_OK) return HS_ERR_INVALID_ARG;
  *won = false;
  char tmp[4200];
  hs_status st = temp_name(path, tmp, sizeof tmp, err);
  if (st != HS_OK) return st;
  if ((st = write_new(tmp, data, len, err)) != HS_OK) return st;
  int rc = link(tmp, path);
  int saved = errno;
  unlink(tmp);
  if (rc != 0) {
    if (saved == EEXIST) return HS_OK;
    return hs_error_set(err, HS_ERR_IO, "%s: cannot publish (link from %s): %s", path, tmp,
                        strerror(saved));
  }
  *won = true;
  /* The temporary's removal and the new name become durable together. */
  return fsync_parent(path, err);
}

hs_status hs_fs_remove(const char *path, hs_error *err) {
  if (not_local(path, err) != HS_OK) return HS_ERR_INVALID_ARG;
  if (unlink(path) != 0 && errno != ENOENT) {
    return hs_error_set(err, HS_ERR_IO, "%s: cannot remove: %s", path, strerror(errno));
  }
  return HS_OK;
}

void hs_fs_names_free(char **names, size_t n) {
  if (names == NULL) return;
  for (size_t i = 0; i < n; i++) hs_free(names[i]);
  hs_free(names);
}

hs_status hs_fs_list(const char *path, char ***names_out, size_t *n_out, hs_error *err) {
  *names_out = NULL;
  *n_out = 0;
  DIR *d = opendir(path);
  if (d == NULL) {
    int e = errno;
    return hs_fs_path_error(err, e == ENOENT ? HS_ERR_NOT_FOUND : HS_ERR_IO, path,
                            "cannot list directory", e);
  }
  char **names = NULL;
  size_t n = 0, cap = 0;
  hs_status st = HS_OK;
  struct dirent *e;
  while ((e = readdir(d)) != NULL) {
    if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0) continue;
    if (n == cap) {
      size_t ncap = cap ? cap * 2 : 16;
      char **nn = hs_realloc(names, ncap * sizeof *nn);
      if (nn == NULL) {
        st = hs_error_set(err, HS_ERR_NOMEM, "%s: out of memory listing", path);
        break;
      }
      names = nn;
      cap = ncap;
    }
    if ((names[n] = hs_strdup(e->d_name)) == NULL) {
      st = hs_error_set(err, HS_ERR_NOMEM, "%s: out of memory listing", path);
      break;
    }
    n++;
  }
  closedir(d);
  if (st != HS_OK) {
    hs_fs_names_free(names, n);
    return st;
  }
  *names_out = names;
  *n_out = n;
  return HS_OK;
}

hs_status hs_fs_random_bytes(void *out, size_t n, hs_error *err) {
  uint8_t *p = out;
  while (n > 0) {
    ssize_t r = getrandom(p, n, 0);
    if (r < 0 && errno == EINTR) continue;
    if (r < 0) return hs_error_set(err, HS_ERR_IO, "getrandom failed: %s", strerror(errno));
    p += r;
    n -= (size_t)r;
  }
  return HS_OK;
}

hs_status hs_fs_uuid4(char out[37], hs_error *err) {
  uint8_t b[16];
  hs_status st = hs_fs_random_bytes(b, sizeof b, err);
  if (st != HS_OK) return st;
  b[6] = (uint8_t)((b[6] & 0x0f) | 0x40);
  b[8] = (uint8_t)((b[8] & 0x3f) | 0x80);
  snprintf(out, 37, "%02x%02x%02x%02x-%02x%02x-%02x%02x-%02x%02x-%02x%02x%02x%02x%02x%02x", b[0],
           b[1], b[2], b[3], b[4], b[5], b[6], b[7], b[8], b[9], b[10], b[11], b[12], b[13], b[14],
           b[15]);
  return HS_OK;
}

/* ------------------------------------------------------------ sync group */

typedef struct sync_job {
  const hs_fs_sync_item *item;
  int rc; /* 0 or errno */
} sync_job;

static void *sync_one(void *arg) {
  sync_job *j = arg;
  j->rc = 0;
  if (j->item->fd >= 0) {
    if (fdatasync(j->item->fd) != 0) j->rc = errno;
    return NULL;
  }
  int fd = open(j->item->path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0) {
    j->rc = errno ? errno : EIO;
    return NULL;
  }
  if (fsync(fd) != 0 && errno != EINVAL) j->rc = errno;
  close(fd);
  return NULL;
}

hs_status hs_fs_sync_group(const hs_fs_sync_item *items, size_t n, hs_error *err) {
  enum { GROUP_MAX = 8 };
  if (n > GROUP_MAX) {
    return hs_error_set(err, HS_ERR_INVALID_ARG, "sync group: %zu items, at most %d", n,
                        (int)GROUP_MAX);
  }
  sync_job jobs[GROUP_MAX];
  pthread_t threads[GROUP_MAX];
  bool started[GROUP_MAX] = {false};
  for (size_t i = 0; i < n; i++) jobs[i].item = &items[i];
  /* Item 0 runs on this thread; the others on their own (or here too when
   * a thread cannot be started). */
  for (size_t i = 1; i < n; i++) {
    started[i] = pthread_create(&threads[i], NULL, sync_one, &jobs[i]) == 0;
  }
  if (n > 0) sync_one(&jobs[0]);
  for (size_t i = 1; i < n; i++) {
    if (started[i]) {
      pthread_join(threads[i], NULL);
    } else {
      sync_one(&jobs[i]);
    }
  }
  for (size_t i = 0; i < n; i++) {
    if (jobs[i].rc == 0) continue;
    return hs_error_set(err, HS_ERR_IO, "%s: %s failed: %s", items[i].path,
                        items[i].fd >= 0 ? "fdatasync" : "fsync of directory",
                        strerror(jobs[i].rc));
  }
  return HS_OK;
}
