/*
 * local.c — the local backend of the object store (store.h), on the
 * POSIX primitives of fs.h and the sources and sinks of io.h.
 *
 * Objects are regular files; folders are directories. Writes keep the
 * durability contract of fs.h: put replaces through a synced temporary
 * and rename(2), then fsyncs the directory; put_if_absent is the link(2)
 * publish; put_many writes unsynced and syncs the files, then their
 * directories, in groups (hs_fs_sync_group). Delete is unlink(2) without a
 * directory fsync (deletes reclaim space; a file back after a crash is an
 * orphan, not a lost commit).
 *
 * put_if_match compares the etag under an exclusive flock(2) of the lock
 * file "<path>.lock", created next to the object and removed before the
 * lock is released. Removing a lock file is safe because a locker checks,
 * once it holds the lock, that the file it locked is still the one named
 * "<path>.lock" (same device and inode) and starts over otherwise: of the
 * processes that lock a removed file and the one that creates the next,
 * only the last proceeds. The lock orders conditional writers among
 * themselves; a plain put does not take it (nor does S3's If-Match order
 * anything but conditional requests against the object's current state).
 *
 * Listings use lstat(2): symbolic links, FIFOs, sockets and devices are
 * not objects and are left out; a recursive listing follows no link, lists
 * regular files only and does not descend folders nested deeper than
 * LIST_DEPTH_MAX below the listed one. A name that vanishes while it is
 * listed is left out.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include "fs.h"
#include "io.h"
#include "store_internal.h"

#define LIST_DEPTH_MAX 64
#define PUT_GROUP 8 /* files synced together (hs_fs_sync_group's limit) */

static void info_of(const struct stat *sb, hs_object_info *info) {
  int64_t mtime_ns = (int64_t)sb->st_mtim.tv_sec * 1000000000 + sb->st_mtim.tv_nsec;
  info->size = (uint64_t)sb->st_size;
  info->mtime_ms = (int64_t)sb->st_mtim.tv_sec * 1000 + sb->st_mtim.tv_nsec / 1000000;
  snprintf(info->etag, sizeof info->etag, "%llu-%llu-%lld-%lld", (unsigned long long)sb->st_dev,
           (unsigned long long)sb->st_ino, (long long)sb->st_size, (long long)mtime_ns);
}

/* The folder holding `path` into `out` ("" when `path` has no '/'). */
static bool parent_of(const char *path, char *out, size_t cap) {
  const char *slash = strrchr(path, '/');
  size_t n = slash == NULL ? 0 : slash == path ? 1 : (size_t)(slash - path);
  if (n + 1 > cap) return false;
  memcpy(out, path, n);
  out[n] = '\0';
  return true;
}

/* Create the folder of `path` when it is missing. */
static hs_status ensure_parent(const char *path, hs_error *err) {
  char dir[PATH_MAX];
  if (!parent_of(path, dir, sizeof dir)) {
    return hs_fs_path_error(err, HS_ERR_IO, path, "cannot create", ENAMETOOLONG);
  }
  struct stat sb;
  if (dir[0] == '\0' || (stat(dir, &sb) == 0 && S_ISDIR(sb.st_mode))) return HS_OK;
  return hs_fs_mkdirs(dir, err);
}

/* pread exactly `len` bytes; a short file is HS_ERR_CORRUPT. */
static hs_status pread_all(int fd, const char *path, uint64_t offset, size_t len, uint8_t *dst,
                           hs_error *err) {
  size_t done = 0;
  while (done < len) {
    ssize_t n = pread(fd, dst + done, len - done, (off_t)(offset + done));
    if (n < 0 && errno == EINTR) continue;
    if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK) && hs_fs_set_blocking(fd)) continue;
    if (n < 0) {
      return hs_error_set(err, HS_ERR_IO, "%s: read failed at offset %llu: %s", path,
                          (unsigned long long)(offset + done), strerror(errno));
    }
    if (n == 0) {
      return hs_error_set(
          err, HS_ERR_CORRUPT, "%s: ends at offset %llu, inside a read of %zu bytes at offset %llu",
          path, (unsigned long long)(offset + done), len, (unsigned long long)offset);
    }
    done += (size_t)n;
  }
  return HS_OK;
}

/* -------------------------------------------------------------- reads */

static hs_status local_get(const hs_store_loc *loc, size_t max_bytes, hs_buf *out,
                           hs_object_info *info, hs_error *err) {
  int fd = -1;
  struct stat sb;
  hs_status st = hs_fs_open_read(loc->path, &fd, &sb, err);
  if (st != HS_OK) return st;
  size_t size = (size_t)sb.st_size;
  if ((uint64_t)sb.st_size > max_bytes) {
    st = hs_error_set(err, HS_ERR_CORRUPT, "%s: %llu bytes, more than the limit of %zu", loc->path,
                      (unsigned long long)sb.st_size, max_bytes);
  } else if (!hs_buf_reserve(out, size)) {
    st = hs_error_set(err, HS_ERR_NOMEM, "%s: out of memory for %zu bytes", loc->path, size);
  }
  if (st == HS_OK && size > 0) st = pread_all(fd, loc->path, 0, size, out->data + out->len, err);
  /* The info must describe the bytes read: a file that changed size under
   * the read (objects are written once; this is a writer not following
   * that) is an error rather than bytes under a wrong etag. */
  struct stat after;
  if (st == HS_OK && (fstat(fd, &after) != 0 || after.st_size != sb.st_size)) {
    st = hs_error_set(err, HS_ERR_IO, "%s: changed while it was read", loc->path);
  }
  close(fd);
  if (st != HS_OK) return st;
  out->len += size;
  info_of(&after, info);
  return HS_OK;
}

/* `len` bytes at `offset` of the open file `fd` (stat'ed as `sb`). */
static hs_status range_of(int fd, const struct stat *sb, const char *path, uint64_t offset,
                          size_t len, void *dst, hs_error *err) {
  uint64_t size = (uint64_t)sb->st_size;
  if (offset > size || len > size - offset) {
    return hs_error_set(err, HS_ERR_CORRUPT,
                        "%s: read of %zu bytes at offset %llu is past the end (size %llu)", path,
                        len, (unsigned long long)offset, (unsigned long long)size);
  }
  return pread_all(fd, path, offset, len, dst, err);
}

static hs_status local_get_range(const hs_store_loc *loc, uint64_t offset, size_t len, void *dst,
                                 hs_error *err) {
  int fd = -1;
  struct stat sb;
  hs_status st = hs_fs_open_read(loc->path, &fd, &sb, err);
  if (st != HS_OK) return st;
  st = range_of(fd, &sb, loc->path, offset, len, dst, err);
  close(fd);
  return st;
}

/* One after another (the page cache answers): a run of ranges of one
 * file shares one open. */
static hs_status local_get_ranges(const hs_store_loc *locs, const hs_store_range *ranges, size_t n,
                                  hs_error *err) {
  int fd = -1;
  struct stat sb;
  const char *open_path = NULL;
  hs_status st = HS_OK;
  for (size_t i = 0; st == HS_OK && i < n; i++) {
    if (open_path == NULL || strcmp(open_path, locs[i].path) != 0) {
      if (fd >= 0) close(fd);
      open_path = NULL;
      st = hs_fs_open_read(locs[i].path, &fd, &sb, err);
      if (st != HS_OK) break;
      open_path = locs[i].path;
    }
    st = range_of(fd, &sb, locs[i].path, ranges[i].offset, ranges[i].len, ranges[i].dst, err);
  }
  if (fd >= 0) close(fd);
  return st;
}

static hs_status local_head(const hs_store_loc *loc, hs_object_info *info, hs_error *err) {
  struct stat sb;
  if (stat(loc->path, &sb) != 0) {
    int e = errno;
    return hs_fs_path_error(err, e == ENOENT ? HS_ERR_NOT_FOUND : HS_ERR_IO, loc->path,
                            "cannot look up", e);
  }
  if (!S_ISREG(sb.st_mode)) {
    return hs_error_set(err, HS_ERR_IO, "%s: not an object (%s, not a file)", loc->path,
                        hs_fs_kind_name(sb.st_mode));
  }
  info_of(&sb, info);
  return HS_OK;
}

/* ------------------------------------------------------------- writes */

static hs_status local_put(const hs_store_loc *loc, const void *data, size_t len, hs_error *err) {
  hs_status st = ensure_parent(loc->path, err);
  if (st == HS_OK) st = hs_fs_replace_file(loc->path, data, len, err);
  return st;
}

static hs_status local_put_if_absent(const hs_store_loc *loc, const void *data, size_t len,
                                     bool *won, hs_error *err) {
  *won = false;
  hs_status st = ensure_parent(loc->path, err);
  if (st == HS_OK) st = hs_fs_publish_exclusive(loc->path, data, len, won, err);
  return st;
}

/* Lock "<path>.lock" exclusively (see the file comment). *fd_out is -1
 * with HS_OK when the folder is missing (so is the object). */
static hs_status lock_object(const char *lock, int *fd_out, hs_error *err) {
  *fd_out = -1;
  for (;;) {
    int fd = open(lock, O_RDWR | O_CREAT | O_CLOEXEC, 0644);
    if (fd < 0 && errno == ENOENT) return HS_OK;
    if (fd < 0) return hs_fs_path_error(err, HS_ERR_IO, lock, "cannot create lock file", errno);
    int rc;
    while ((rc = flock(fd, LOCK_EX)) != 0 && errno == EINTR) {
    }
    if (rc != 0) {
      hs_status st = hs_fs_path_error(err, HS_ERR_IO, lock, "cannot lock", errno);
      close(fd);
      return st;
    }
    struct stat held, named;
    if (fstat(fd, &held) == 0 && stat(lock, &named) == 0 && held.st_dev == named.st_dev &&
        held.st_ino == named.st_ino) {
      *fd_out = fd;
      return HS_OK;
    }
    close(fd); /* removed (or replaced) by the previous holder: again */
  }
}

static hs_status local_put_if_match(const hs_store_loc *loc, const void *data, size_t len,
                                    const char *etag, bool *won, hs_error *err) {
  *won = false;
  char lock[PATH_MAX];
  if ((size_t)snprintf(lock, sizeof lock, "%s.lock", loc->path) >= sizeof lock) {
    return hs_fs_path_error(err, HS_ERR_IO, loc->path, "cannot lock", ENAMETOOLONG);
  }
  int fd = -1;
  hs_status st = lock_object(lock, &fd, err);
  if (st != HS_OK || fd < 0) return st;
  struct stat sb;
  if (stat(loc->path, &sb) != 0) {
    if (errno != ENOENT) st = hs_fs_path_error(err, HS_ERR_IO, loc->path, "cannot look up", errno);
  } else {
    hs_object_info now;
    info_of(&sb, &now);
    if (S_ISREG(sb.st_mode) && strcmp(now.etag, etag) == 0) {
      st = hs_fs_replace_file(loc->path, data, len, err);
      *won = st == HS_OK;
    }
  }
  unlink(lock); /* before the unlock: see the file comment */
  close(fd);
  return st;
}

static hs_status local_put_many(const hs_store_loc *locs, const hs_store_put_item *items, size_t n,
                                hs_error *err) {
  char **dirs = hs_calloc(n ? n : 1, sizeof *dirs); /* distinct folders to fsync */
  if (dirs == NULL) return hs_error_set(err, HS_ERR_NOMEM, "%s: out of memory", locs[0].path);
  size_t n_dirs = 0, written = 0;
  hs_status st = HS_OK;
  /* Files, PUT_GROUP at a time: written unsynced, then synced together. */
  for (size_t i = 0; st == HS_OK && i < n; i += PUT_GROUP) {
    size_t m = n - i < PUT_GROUP ? n - i : PUT_GROUP;
    hs_fs_sync_item group[PUT_GROUP];
    size_t k = 0;
    for (; st == HS_OK && k < m; k++) {
      const char *path = locs[i + k].path;
      group[k] = (hs_fs_sync_item){.fd = -1, .path = path};
      st = ensure_parent(path, err);
      if (st == HS_OK)
        st = hs_fs_create_unsynced(path, items[i + k].data, items[i + k].len, &group[k].fd, err);
      if (st != HS_OK) break;
      written = i + k + 1;
    }
    if (st == HS_OK) st = hs_fs_sync_group(group, m, err);
    for (size_t j = 0; j < k && j < m; j++)
      if (group[j].fd >= 0) close(group[j].fd);
  }
  /* Then the folders that name them. */
  for (size_t i = 0; st == HS_OK && i < n; i++) {
    char dir[PATH_MAX];
    if (!parent_of(locs[i].path, dir, sizeof dir)) continue;
    if (dir[0] == '\0') strcpy(dir, ".");
    bool seen = false;
    for (size_t j = 0; j < n_dirs && !seen; j++) seen = strcmp(dirs[j], dir) == 0;
    if (seen) continue;
    if ((dirs[n_dirs] = hs_strdup(dir)) == NULL) {
      st = hs_error_set(err, HS_ERR_NOMEM, "%s: out of memory", locs[i].path);
    } else {
      n_dirs++;
    }
  }
  for (size_t i = 0; st == HS_OK && i < n_dirs; i += PUT_GROUP) {
    size_t m = n_dirs - i < PUT_GROUP ? n_dirs - i : PUT_GROUP;
    hs_fs_sync_item group[PUT_GROUP];
    for (size_t k = 0; k < m; k++) group[k] = (hs_fs_sync_item){.fd = -1, .path = dirs[i + k]};
    st = hs_fs_sync_group(group, m, err);
  }
  for (size_t i = 0; i < n_dirs; i++) hs_free(dirs[i]);
  hs_free(dirs);
  /* All or nothing: what this call created goes again. */
  for (size_t i = 0; st != HS_OK && i < written; i++) unlink(locs[i].path);
  return st;
}

static hs_status local_del(const hs_store_loc *loc, hs_error *err) {
  return hs_fs_remove(loc->path, err);
}

static hs_status local_mkdirs(const hs_store_loc *loc, hs_error *err) {
  return hs_fs_mkdirs(loc->path, err);
}

/* -------------------------------------------------------------- lists */

typedef struct entry_vec {
  hs_store_entry *v;
  size_t n, cap;
} entry_vec;

static hs_status entry_add(entry_vec *ev, const char *name, bool is_dir, const struct stat *sb,
                           hs_error *err) {
  if (ev->n == ev->cap) {
    size_t nc = ev->cap ? ev->cap * 2 : 32;
    hs_store_entry *nv = hs_realloc(ev->v, nc * sizeof *nv);
    if (nv == NULL) return hs_error_set(err, HS_ERR_NOMEM, "%s: out of memory listing", name);
    ev->v = nv;
    ev->cap = nc;
  }
  hs_store_entry *e = &ev->v[ev->n];
  memset(e, 0, sizeof *e);
  if ((e->name = hs_strdup(name)) == NULL)
    return hs_error_set(err, HS_ERR_NOMEM, "%s: out of memory listing", name);
  e->is_dir = is_dir;
  if (!is_dir) info_of(sb, &e->info);
  ev->n++;
  return HS_OK;
}

/* List folder `path` (a buffer of PATH_MAX holding `len` bytes) into
 * `ev`; names start after `root_len` bytes of `path` (and its '/'). */
static hs_status list_into(char *path, size_t len, size_t root_len, int depth, bool recursive,
                           entry_vec *ev, hs_error *err) {
  DIR *d = opendir(len == 0 ? "/" : path);
  if (d == NULL) {
    /* missing: an empty listing (a subfolder: removed while listed) */
    if (errno == ENOENT) return HS_OK;
    return hs_fs_path_error(err, HS_ERR_IO, len == 0 ? "/" : path, "cannot list folder", errno);
  }
  hs_status st = HS_OK;
  struct dirent *de;
  while (st == HS_OK && (errno = 0, de = readdir(d)) != NULL) {
    if (strcmp(de->d_name, ".") == 0 || strcmp(de->d_name, "..") == 0) continue;
    size_t nl = strlen(de->d_name);
    if (len + 1 + nl >= PATH_MAX) {
      path[len] = '\0';
      st = hs_fs_path_error(err, HS_ERR_IO, path, "cannot list folder", ENAMETOOLONG);
      break;
    }
    path[len] = '/';
    memcpy(path + len + 1, de->d_name, nl + 1);
    struct stat sb;
    const char *name = path + root_len + 1;
    if (lstat(path, &sb) != 0) {
      if (errno != ENOENT) st = hs_fs_path_error(err, HS_ERR_IO, path, "cannot look up", errno);
    } else if (S_ISDIR(sb.st_mode) && recursive) {
      if (depth < LIST_DEPTH_MAX)
        st = list_into(path, len + 1 + nl, root_len, depth + 1, true, ev, err);
    } else if (S_ISDIR(sb.st_mode) || S_ISREG(sb.st_mode)) {
      st = entry_add(ev, name, S_ISDIR(sb.st_mode), &sb, err);
    }
    path[len] = '\0';
  }
  if (st == HS_OK && errno != 0)
    st = hs_fs_path_error(err, HS_ERR_IO, len == 0 ? "/" : path, "cannot list folder", errno);
  closedir(d);
  return st;
}

static int entry_cmp(const void *a, const void *b) {
  return strcmp(((const hs_store_entry *)a)->name, ((const hs_store_entry *)b)->name);
}

static hs_status local_list(const hs_store_loc *dir, bool recursive, hs_store_entry **out,
                            size_t *n_out, hs_error *err) {
  *out = NULL;
  *n_out = 0;
  char path[PATH_MAX];
  size_t len = strlen(dir->path);
  if (len >= PATH_MAX)
    return hs_fs_path_error(err, HS_ERR_IO, dir->path, "cannot list folder", ENAMETOOLONG);
  memcpy(path, dir->path, len + 1);
  while (len > 0 && path[len - 1] == '/') path[--len] = '\0';
  entry_vec ev = {0};
  hs_status st = list_into(path, len, len, 0, recursive, &ev, err);
  if (st != HS_OK) {
    hs_store_entries_free(ev.v, ev.n);
    return st;
  }
  if (ev.n > 1) qsort(ev.v, ev.n, sizeof *ev.v, entry_cmp);
  *out = ev.v;
  *n_out = ev.n;
  return HS_OK;
}

/* ---------------------------------------------------- sources, sinks */

static hs_status local_source_open(const hs_store_loc *loc, hs_source **out, hs_error *err) {
  return hs_source_open_file(loc->path, out, err);
}

static hs_status local_sink_open(const hs_store_loc *loc, hs_sink **out, hs_error *err) {
  *out = NULL;
  hs_status st = ensure_parent(loc->path, err);
  if (st == HS_OK) st = hs_sink_open_file(loc->path, out, err);
  return st;
}

const hs_store_backend hs_store_local_backend = {
    .get = local_get,
    .get_range = local_get_range,
    .get_ranges = local_get_ranges,
    .head = local_head,
    .put = local_put,
    .put_if_absent = local_put_if_absent,
    .put_if_match = local_put_if_match,
    .put_many = local_put_many,
    .del = local_del,
    .mkdirs = local_mkdirs,
    .list = local_list,
    .source_open = local_source_open,
    .sink_open = local_sink_open,
};
