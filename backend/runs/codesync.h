#pragma once

#include "core/expected.h"

#include <QByteArray>
#include <QList>
#include <QString>

namespace scaledesk {

class Transport;

/// How much code a launch may send (a run definition's `sync`): a code folder is source, not data.
struct CodeLimits {
    qint64 maxFileBytes = 50LL << 20;
    qint64 maxTotalBytes = 500LL << 20;
};

/// One file of a code folder as it is sent: its path under the folder ('/'-separated), its content's
/// SHA-256 (hex) and whether it is executable.
struct CodeFile {
    QString path;
    QByteArray sha256;
    qint64 size = 0;
    bool executable = false;
};

/// A code folder read at launch: the files git would track (tracked and untracked ones that no
/// .gitignore excludes, read by git itself), each hashed, and the tree's own hash, which names the
/// copy on the cluster: two runs of the same code share one copy. When the folder is in a git
/// checkout, its commit, whether the checkout has uncommitted changes, and their diff.
struct CodeSnapshot {
    QString folder;         ///< absolute, on this machine
    QList<CodeFile> files;  ///< sorted by path
    QByteArray hash;        ///< hex SHA-256 of the tree (paths, modes, contents)
    qint64 bytes = 0;
    QString gitCommit;  ///< empty: not a git checkout
    bool gitDirty = false;
    QByteArray gitDiff;  ///< `git diff HEAD` when dirty
    /// The folder name of the copy: the hash's first 16 hex digits.
    QString shortHash() const { return QString::fromLatin1(hash.left(16)); }
};

/// Reads `folder`. Refused, naming the file: a file over `limits.maxFileBytes` or a folder over
/// `maxTotalBytes` (the largest files named); a symbolic link whose target is outside the folder
/// (or missing, or a folder); a name the cluster's file system cannot hold (not UTF-8, a control
/// character, a part over 255 bytes, a path over 4,095). Needs git (for .gitignore).
Expected<CodeSnapshot> snapshotCode(const QString& folder, const CodeLimits& limits = {});

/// What a sync did.
struct CodeSyncReport {
    QString remoteDir;    ///< <code root>/<short hash>, absolute on the far side: the command's {code}
    bool reused = false;  ///< the copy was there already: nothing was sent
    int filesSent = 0;
    qint64 bytesSent = 0;   ///< file contents sent
    bool fromBase = false;  ///< the copy was made from this folder's latest copy there, changing what differs
};

/// Makes `snapshot` present at `<codeRoot>/<short hash>` on the far side. A copy that exists is
/// used as it is (one stat). Otherwise only the contents the far side lacks are sent over the
/// transport (SFTP for a cluster) into `<codeRoot>/objects` (read-only, named by their hash), and
/// the copy is made of hard links to them in a temporary folder renamed into place, so a copy is
/// either whole or absent, and two launches racing make one. Many files go as one tar archive;
/// the folder's latest copy there is the base of its next one (only what differs is relinked).
Expected<CodeSyncReport> syncCode(Transport& transport, const CodeSnapshot& snapshot, const QString& codeRoot);

}  // namespace scaledesk
